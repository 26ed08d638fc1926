/*
 * main.c - sharness-client: the messenger between a person or an agent and
 * sharnessd (SPEC §10).  It sends one request and prints the answer.  It
 * executes nothing but itself: the one process it may start, and only with
 * SHARNESS_RELAY=on, is its own relay (relay.h), this binary again, which copies bytes to the daemon and
 * starts nothing; so there is nothing here an agent could use to run a
 * command outside the sandbox.
 *
 * Trust: arguments and stdin come from the caller; replies come from the
 * authenticated daemon.  Exit codes: `run` mirrors the command (124 timeout,
 * 128+N signal) and uses 125 for its own or the daemon's failures; the other
 * commands exit 0 or 125, and 2 for usage errors.
 */
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api.h"
#include "buf.h"
#include "conf.h"
#include "doctor.h"
#include "hook.h"
#include "job.h"
#include "mcp.h"
#include "relay.h"
#include "run.h"
#include "show.h"
#include "version.h"

#define EXIT_USAGE 2

static const char usage_text[] =
	"usage: sharness-client [--url URL] [--cert FILE] [--key FILE] [--ca FILE] COMMAND ...\n"
	"       sharness-client --help | -h | --version\n"
	"\n"
	"commands:\n"
	"  run [--profile P] [--cwd DIR] [--timeout S] [--stdin] [--env NAME=VALUE]... -- CMD...\n"
	"        run CMD (the words joined by spaces) as bash -c in a sharnessd sandbox; exits with\n"
	"        its code, 128+N if killed by signal N, 124 on timeout, 125 on a client/daemon error\n"
	"  profiles [--json]             list the daemon's profiles\n"
	"  policy [--json]               show the daemon's own policy\n"
	"  approvals [--json]            list runs waiting for a person's approval\n"
	"  approve ID [--json]           allow a pending run (needs a person certificate)\n"
	"  deny ID [--json]              deny a pending run (needs a person certificate)\n"
	"  hook claude|codex|gemini|cursor [--profile P] [--ask] [--deny-unrouted | --rewrite]\n"
	"        agent PreToolUse hook: rewrite the shell tool call to 'sharness-client run'\n"
	"  job start [--profile P] [--cwd DIR] [--timeout S] [--stdin] [--env N=V]... [--json] -- CMD...\n"
	"        start CMD as a job (POST /v0/jobs): prints its id and returns at once\n"
	"  job status ID | job kill ID | job list      [--json]\n"
	"  job output ID [--stream stdout|stderr] [--since N] [-f|--follow] [--json]\n"
	"        the job's output from byte N; -f follows it to the end, then exits with its code\n"
	"  mcp [--profile P]             MCP stdio server: run_command and the job tools\n"
	"  doctor                        check the certificates, a real request to the daemon, the relay\n"
	"                                and each agent's hook: one \u2714/\u2718 line each; exit 1 on any \u2718\n"
	"  relay                         keep connections to the daemon ready for clients of the same\n"
	"                                identity (by hand or the sharness-relay user unit; with\n"
	"                                SHARNESS_RELAY=on the first client starts one); ends 10 minutes\n"
	"                                after its last client (SHARNESS_RELAY_IDLE, 0: never);\n"
	"                                SHARNESS_RELAY=off: clients neither use nor start one\n"
	"\n"
	"connection (flag, else environment, else default):\n"
	"  --url   SHARNESS_URL   https://127.0.0.1:7443\n"
	"  --cert  SHARNESS_CERT  $XDG_CONFIG_HOME/sharness/client.pem (~/.config/sharness/client.pem)\n"
	"  --key   SHARNESS_KEY   $XDG_CONFIG_HOME/sharness/client.key\n"
	"  --ca    SHARNESS_CA    $XDG_CONFIG_HOME/sharness/ca.pem\n";

struct args {
	struct conf conf;
	const char *cmdname;
	const char *pos[4];         /* positional words after the command name */
	int npos;
	char **words;               /* after "--" */
	int nwords;
	const char *profile, *cwd;
	long timeout_s;
	int use_stdin, json, ask, follow, deny_unrouted, rewrite;
	json_t *env;
	const char *stream;         /* job output */
	long long since;
};

/* The last message die() printed: a hook that fails before it reads its
 * input still answers Cursor with it (hook_refusal). */
static char last_error[512];

static int die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
	fprintf(stderr, "sharness-client: %s\n", last_error);
	return code;
}

/* `hook cursor` that failed on its own arguments or settings: exit 2 blocks
 * the other agents' commands, but a Cursor that takes a non-zero exit for a
 * failed hook runs the command, so it gets the JSON deny. */
static int hook_refusal(int argc, char **argv, int code)
{
	int i = 1;
	while (i < argc && strcmp(argv[i], "hook") != 0 && strcmp(argv[i], "--") != 0)
		i++;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "cursor") == 0)
			return hook_deny(HOOK_CURSOR, last_error[0] ? last_error : "the hook's own arguments are wrong");
	return code;
}

/* A hook command line that asks for --help or --version: printed, with
 * exit 0, that would tell the agent to run the command (review s36). */
static bool hook_asks_help(int argc, char **argv)
{
	bool hook = false, help = false;
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		hook |= strcmp(argv[i], "hook") == 0;
		help |= strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--version") == 0;
	}
	return hook && help;
}

/* Returns the value of --name VALUE / --name=VALUE at argv[*i], advancing *i;
 * NULL when argv[*i] is not that option. *missing is set when it has no value. */
static const char *optval(char **argv, int argc, int *i, const char *name, int *missing)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	if (!a || strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

/* 0 ok, -1 usage error (already printed), 1 help/version printed. */
static int parse(int argc, char **argv, struct args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *v;
		int missing = 0;
		if (strcmp(arg, "--") == 0) {
			a->words = argv + i + 1;
			a->nwords = argc - i - 1;
			break;
		}
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			fputs(usage_text, stdout);
			return 1;
		}
		if (strcmp(arg, "--version") == 0) {
			puts("sharness-client " SHARNESS_VERSION);
			return 1;
		}
		if ((v = optval(argv, argc, &i, "--url", &missing)))
			a->conf.flag_url = v;
		else if ((v = optval(argv, argc, &i, "--cert", &missing)))
			a->conf.flag_cert = v;
		else if ((v = optval(argv, argc, &i, "--key", &missing)))
			a->conf.flag_key = v;
		else if ((v = optval(argv, argc, &i, "--ca", &missing)))
			a->conf.flag_ca = v;
		else if ((v = optval(argv, argc, &i, "--profile", &missing)))
			a->profile = v;
		else if ((v = optval(argv, argc, &i, "--cwd", &missing)))
			a->cwd = v;
		else if ((v = optval(argv, argc, &i, "--timeout", &missing))) {
			char *end;
			errno = 0;
			long t = strtol(v, &end, 10);
			if (errno || end == v || *end || t < 1 || t > RUN_TIMEOUT_MAX_S) {
				die(0, "--timeout '%s' must be a whole number of seconds, at least 1", v);
				return -1;
			}
			a->timeout_s = t;
		} else if ((v = optval(argv, argc, &i, "--env", &missing))) {
			const char *eq = strchr(v, '=');
			if (!eq || eq == v) {
				die(0, "--env '%s' must be NAME=VALUE", v);
				return -1;
			}
			char *name = strndup(v, (size_t)(eq - v));
			json_t *val = json_string(eq + 1);
			if (!name || !val || (!a->env && !(a->env = json_object()))) {
				free(name);
				json_decref(val);
				die(0, "--env '%s': the name and value must be valid UTF-8", v);
				return -1;
			}
			json_object_set_new(a->env, name, val);
			free(name);
		} else if ((v = optval(argv, argc, &i, "--stream", &missing))) {
			a->stream = v;
		} else if ((v = optval(argv, argc, &i, "--since", &missing))) {
			char *end;
			errno = 0;
			long long n = strtoll(v, &end, 10);
			if (errno || end == v || *end || n < 0) {
				die(0, "--since '%s' must be a byte offset, 0 or more", v);
				return -1;
			}
			a->since = n;
		} else if (strcmp(arg, "-f") == 0 || strcmp(arg, "--follow") == 0)
			a->follow = 1;
		else if (strcmp(arg, "--stdin") == 0)
			a->use_stdin = 1;
		else if (strcmp(arg, "--json") == 0)
			a->json = 1;
		else if (strcmp(arg, "--ask") == 0)
			a->ask = 1;
		else if (strcmp(arg, "--deny-unrouted") == 0)
			a->deny_unrouted = 1;
		else if (strcmp(arg, "--rewrite") == 0)
			a->rewrite = 1;
		else if (missing) {
			die(0, "%s needs a value", arg);
			return -1;
		} else if (arg[0] == '-' && arg[1] != '\0') {
			die(0, "unknown option '%s' (see --help)", arg);
			return -1;
		} else if (!a->cmdname)
			a->cmdname = arg;
		else if (a->npos < (int)(sizeof a->pos / sizeof a->pos[0]))
			a->pos[a->npos++] = arg;
		else {
			die(0, "too many arguments (for run, put the command after --)");
			return -1;
		}
		if (missing) {
			die(0, "%s needs a value", arg);
			return -1;
		}
	}
	return 0;
}


/* A streamed run's output, to our own stdout or stderr as it arrives. */
static void print_live(void *arg, int fd, const char *buf, size_t len)
{
	(void)arg;
	fd_write_all(fd == 2 ? 2 : 1, buf, len);
}

static int cmd_run(struct args *a, bool as_job)
{
	struct buf cmd = {.max = RUN_MAX_CMD}, in = {.max = RUN_MAX_STDIN};
	char err[1024];
	json_t *reply = NULL;
	int code = RUN_EXIT_ERROR;
	if (a->npos != (as_job ? 1 : 0) || !a->words) {
		code = die(RUN_EXIT_ERROR, as_job ? "usage: sharness-client job start [options] -- CMD..."
		                                  : "usage: sharness-client run [options] -- CMD...");
		goto out;
	}
	/* Words after -- are joined by single spaces, as ssh does: the hook
	 * passes the whole command as one quoted word, so it arrives intact. */
	for (int i = 0; i < a->nwords; i++) {
		if ((i && buf_puts(&cmd, " ") < 0) || buf_puts(&cmd, a->words[i]) < 0) {
			code = die(RUN_EXIT_ERROR, "the command is longer than the %u KiB sharnessd accepts",
				   RUN_MAX_CMD >> 10);
			goto out;
		}
	}
	struct run_opts o = {.profile = a->profile, .cwd = a->cwd, .timeout_s = a->timeout_s, .env = a->env};
	/* Output as it comes (SHARNESS_STREAM=0: all at the end). */
	const char *sv = getenv("SHARNESS_STREAM");
	if (as_job)
		o.path = "/v0/jobs";
	else if (!(sv && strcmp(sv, "0") == 0))
		o.on_output = print_live;
	if (a->use_stdin) {
		if (buf_read_fd(&in, 0) < 0) {
			code = die(RUN_EXIT_ERROR, errno == EFBIG ? "stdin is larger than the 1 MiB sharnessd accepts"
								  : "cannot read stdin: %s", strerror(errno));
			goto out;
		}
		o.stdin_data = in.data ? in.data : "";
		o.stdin_len = in.len;
	}
	if (run_call(&a->conf, cmd.data ? cmd.data : "", cmd.len, &o, &reply, err, sizeof err) < 0) {
		code = die(RUN_EXIT_ERROR, "%s", err);
		goto out;
	}
	if (as_job) { /* 202 {"job_id", "state"} */
		const char *id = json_string_value(json_object_get(reply, "job_id"));
		if (a->json) {
			char *s = json_dumps(reply, JSON_COMPACT);
			printf("%s\n", s ? s : "null");
			free(s);
		} else
			printf("%s\n", id ? id : "");
		code = id ? 0 : die(RUN_EXIT_ERROR, "sharnessd's reply carries no job_id");
		goto out;
	}
	size_t olen, elen;
	const char *so = run_stream(reply, "stdout", &olen);
	const char *se = run_stream(reply, "stderr", &elen);
	/* A closed stdout (`| head`) must not change the command's exit code. */
	fd_write_all(1, so, olen);
	fd_write_all(2, se, elen);
	/* What a lock refused, named, after the command's own stderr. */
	char dl[1024];
	for (size_t i = 0; run_denial_line(reply, i, dl, sizeof dl) == 0; i++) {
		if (elen && se[elen - 1] != '\n' && i == 0)
			fd_write_all(2, "\n", 1);
		fd_write_all(2, dl, strlen(dl));
		fd_write_all(2, "\n", 1);
	}
	err[0] = '\0';
	code = run_exit_code(reply, err, sizeof err);
	if (err[0])
		die(0, "%s", err);
out:
	json_decref(reply);
	buf_free(&cmd);
	buf_free(&in);
	return code;
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static void print_profiles(json_t *r)
{
	json_t *list = json_object_get(r, "profiles"), *p;
	size_t i;
	json_array_foreach(list, i, p) {
		printf("%-12s %s\n", str(p, "name"), str(p, "description"));
		printf("%-12s policy %s\n", "", str(p, "policy_hash"));
	}
	if (json_array_size(list) == 0)
		puts("no profiles");
}

static void print_approvals(json_t *r)
{
	json_t *list = json_is_array(r) ? r : json_object_get(r, "approvals"), *p;
	size_t i;
	if (json_array_size(list) == 0) {
		puts("no runs are waiting for approval");
		return;
	}
	/* Every string is the requester's (or the daemon's): shown escaped
	 * (show.h), so a \r or an ESC sequence cannot paint another command over
	 * the real one. */
	json_array_foreach(list, i, p) {
		json_t *id = json_object_get(p, "id");
		if (json_is_integer(id))
			printf("%lld", (long long)json_integer_value(id));
		else
			show_text(stdout, str(p, "id"), "");
		fputs("  profile ", stdout);
		show_text(stdout, str(p, "profile"), "");
		fputs("  requester ", stdout);
		show_text(stdout, str(p, "requester"), "");
		fputs("\n    cwd ", stdout);
		show_text(stdout, str(p, "cwd"), "      | ");
		json_t *parts = json_object_get(p, "cmd_filtered_parts");
		long nparts = json_is_number(parts) ? (long)json_number_value(parts) : 0;
		if (strcmp(str(p, "cmd_shown"), "raw") == 0 || !json_object_get(p, "cmd_shown"))
			fputs("\n    cmd ", stdout);
		else
			printf("\n    cmd (filtered: %ld part(s) shown as [filtered: ...], not the exact command; a person certificate sees it whole) ", nparts);
		show_text(stdout, str(p, "cmd"), "      | ");
		fputs("\n", stdout);
		if (*str(p, "cmd_sha256"))
			printf("    cmd sha256 %s\n", str(p, "cmd_sha256"));
		if (json_is_string(json_object_get(p, "cmd_filtered"))) {
			printf("    filter: %ld part(s) of cmd look like secrets; the audit log and app/orchestrator see\n      | ", nparts);
			show_text(stdout, str(p, "cmd_filtered"), "      | ");
			fputs("\n", stdout);
		}
		json_t *sb = json_object_get(p, "stdin_bytes");
		if (json_is_number(sb) && json_number_value(sb) > 0) {
			printf("    stdin %.0f bytes", json_number_value(sb));
			if (*str(p, "stdin_sha256"))
				printf(", sha256 %s", str(p, "stdin_sha256"));
			fputs(": ", stdout);
			show_text(stdout, str(p, "stdin"), "      | ");
			fputs("\n", stdout);
		}
		json_t *env = json_object_get(p, "env"), *v;
		size_t k;
		json_array_foreach(env, k, v) {
			fputs("    env ", stdout);
			show_text(stdout, json_string_value(v) ? json_string_value(v) : "?", "      | ");
			fputs("\n", stdout);
		}
		json_t *t = json_object_get(p, "timeout_s");
		if (json_is_number(t))
			printf("    timeout %.0f s\n", json_number_value(t));
	}
}

static int cmd_get(struct args *a, const char *path, void (*print)(json_t *))
{
	char err[1024];
	json_t *r;
	int status;
	if (a->npos)
		return die(EXIT_USAGE, "%s takes no arguments", a->cmdname);
	if (api_call(&a->conf, "GET", path, NULL, &r, &status, err, sizeof err) < 0)
		return die(RUN_EXIT_ERROR, "%s", err);
	/* JSON_ENSURE_ASCII: bidi and other format characters leave as \uXXXX,
	 * never raw to a terminal (jansson escapes the C0 controls anyway). */
	char *s = json_dumps(r, JSON_ENSURE_ASCII | (a->json ? JSON_COMPACT : JSON_INDENT(2)));
	if (a->json || !print)
		printf("%s\n", s ? s : "null");
	else
		print(r);
	free(s);
	json_decref(r);
	return 0;
}

static int cmd_decide(struct args *a, const char *decision)
{
	char err[1024], path[200];
	json_t *r;
	int status;
	if (a->npos != 1)
		return die(EXIT_USAGE, "usage: sharness-client %s ID", a->cmdname);
	const char *id = a->pos[0];
	/* The id goes into the URL path: allow only characters that need no
	 * escaping, so it cannot change the path. */
	if (!*id || strlen(id) > 128 || strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != strlen(id))
		return die(EXIT_USAGE, "'%s' is not an approval id (letters, digits, '-', '_', '.')", id);
	snprintf(path, sizeof path, "/v0/approvals/%s", id);
	json_t *body = json_pack("{s:s}", "decision", decision);
	int rc = api_call(&a->conf, "POST", path, body, &r, &status, err, sizeof err);
	json_decref(body);
	if (rc < 0)
		return die(RUN_EXIT_ERROR, "%s", err);
	if (a->json) {
		char *s = json_dumps(r, JSON_COMPACT);
		printf("%s\n", s ? s : "null");
		free(s);
	} else {
		printf("%s %s\n", strcmp(decision, "allow") == 0 ? "approved" : "denied", id);
	}
	json_decref(r);
	return 0;
}

int main(int argc, char **argv)
{
	struct args a;
	char err[512];
	int code;
	bool hook_ran = false;
	memset(&a, 0, sizeof a);
	/* Writing to a closed socket or pipe must be an error return, not death. */
	signal(SIGPIPE, SIG_IGN);
	/* OpenSSL is started where it is first needed (tls_lib_init, tls.h). */

	if (hook_asks_help(argc, argv)) {
		code = die(EXIT_USAGE, "a hook's command line takes no --help or --version (the agent would run the "
				       "command): remove it");
		goto out;
	}
	int p = parse(argc, argv, &a);
	if (p != 0) {
		code = p > 0 ? 0 : (a.cmdname && strcmp(a.cmdname, "run") == 0 ? RUN_EXIT_ERROR : EXIT_USAGE);
		goto out;
	}
	if (!a.cmdname) {
		fputs(usage_text, stderr);
		code = EXIT_USAGE;
		goto out;
	}
	int is_job_start = strcmp(a.cmdname, "job") == 0 && a.npos >= 1 && strcmp(a.pos[0], "start") == 0;
	int is_run = strcmp(a.cmdname, "run") == 0 || is_job_start;
	if (conf_resolve(&a.conf, err, sizeof err) < 0) {
		code = die(is_run ? RUN_EXIT_ERROR : EXIT_USAGE, "%s", err);
		goto out;
	}
	if (!is_run && (a.words || a.use_stdin || a.cwd || a.timeout_s || a.env)) {
		code = die(EXIT_USAGE, "--, --stdin, --cwd, --timeout and --env belong to run");
		goto out;
	}
	if (strcmp(a.cmdname, "job") != 0 && (a.stream || a.since || a.follow)) {
		code = die(EXIT_USAGE, "--stream, --since and -f belong to job output");
		goto out;
	}
	if (is_job_start) {
		code = a.npos != 1 ? die(RUN_EXIT_ERROR, "job start takes the command after --") : cmd_run(&a, true);
	} else if (is_run) {
		code = cmd_run(&a, false);
	} else if (strcmp(a.cmdname, "job") == 0) {
		struct job_args j = {.sub = a.npos ? a.pos[0] : "", .id = a.npos > 1 ? a.pos[1] : NULL,
		                     .stream = a.stream, .since = a.since, .follow = a.follow, .json = a.json};
		code = a.npos < 1 || a.npos > 2 ? die(EXIT_USAGE, "usage: sharness-client job start|status|output|kill|list ...")
		                                : job_main(&a.conf, &j);
	} else if (strcmp(a.cmdname, "profiles") == 0) {
		code = cmd_get(&a, "/v0/profiles", print_profiles);
	} else if (strcmp(a.cmdname, "policy") == 0) {
		code = cmd_get(&a, "/v0/policy", NULL);
	} else if (strcmp(a.cmdname, "approvals") == 0) {
		code = cmd_get(&a, "/v0/approvals", print_approvals);
	} else if (strcmp(a.cmdname, "approve") == 0) {
		code = cmd_decide(&a, "allow");
	} else if (strcmp(a.cmdname, "deny") == 0) {
		code = cmd_decide(&a, "deny");
	} else if (strcmp(a.cmdname, "hook") == 0) {
		struct hook_opts o = {.profile = a.profile,
				      .ask = a.ask,
				      .deny_unrouted = a.deny_unrouted,
				      .rewrite = a.rewrite,
				      .conf = &a.conf};
		if (a.npos != 1 || hook_agent_parse(a.pos[0], &o.agent) < 0) {
			code = die(EXIT_USAGE, "usage: sharness-client hook claude|codex|gemini|cursor [--profile P] [--ask] [--deny-unrouted | --rewrite]");
		} else {
			hook_ran = true;
			code = hook_main(&o);
		}
	} else if (strcmp(a.cmdname, "doctor") == 0) {
		/* Its real request is a full handshake: it checks what a client
		 * without a ticket would meet. */
		a.conf.no_ticket = 1;
		code = a.npos ? die(EXIT_USAGE, "doctor takes no arguments") : doctor_run(&a.conf);
	} else if (strcmp(a.cmdname, "relay") == 0) {
		code = a.npos ? die(EXIT_USAGE, "relay takes no arguments") : relay_main(&a.conf);
	} else if (strcmp(a.cmdname, "mcp") == 0) {
		code = a.npos ? die(EXIT_USAGE, "mcp takes no arguments") : mcp_main(&a.conf, a.profile);
	} else {
		code = die(EXIT_USAGE, "unknown command '%s' (see --help)", a.cmdname);
	}
out:
	if (code != 0 && !hook_ran && (!a.cmdname || strcmp(a.cmdname, "hook") == 0))
		code = hook_refusal(argc, argv, code);
	conf_free(&a.conf);
	json_decref(a.env);
	return code;
}
