# sharness - one GNU Makefile; everything is built under build/.
#   make          build/sharnessd and build/sharness-client
#   make run      install missing packages, build, make dev certs once, run in the foreground
#   make test     install missing packages, build, run every test; last line "N passed, N failed"
#   make asan     the same binaries with ASan+UBSan (then: make asan test)
#   make vm-test  boot real Debian systems (VMS="bookworm bookworm-bpo trixie") and
#                 check build, install, the unit, the verdicts, make run there

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=

WARN    := -std=gnu17 -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wvla -Wimplicit-fallthrough
HARDEN  := -D_FORTIFY_SOURCE=3 -fstack-protector-strong -fstack-clash-protection \
           -fcf-protection -fPIE
OPT     ?= -O2 -g
CFLAGS  += $(OPT) $(WARN) $(HARDEN) -D_GNU_SOURCE -MMD -MP
LDFLAGS += -pie -Wl,-z,relro,-z,now,-z,noexecstack
# Root's image (sharnessd) maps none of the network's libraries; the front's
# (sharnessd-front) gets them.  LIBS: everything, for tests and benchmarks.
ROOT_LIBS  := -lcjson -lcgroup -lseccomp -lcrypto
FRONT_LIBS := -lmicrohttpd -lgnutls -lcjson -lseccomp -lhs -lcrypto -lpthread -lm
LIBS       := -lmicrohttpd -lgnutls -lcjson -lcgroup -lseccomp -lhs -lcrypto -lpthread -lm

ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

# The daemon, by who runs it (README, "The code"):
#   start/   root, once: options, configuration, the self-check, crash
#            recovery, the front's exec; --doctor, --check-config
#   root/    root, after start-up: the launcher, a supervisor per run, the
#            sandbox, cgroups, the seccomp listener and the file actor
#   asrun/   forked by root and dropped to a run's uid before it reads
#            anything of the run: the file actor's requests (its own
#            executable, sharness-actor), the sandbox init's last steps
#   front/   the front's own uid (sharnessd-front): TLS, HTTP, JSON, the
#            proxy, approvals, jobs, replies
#   filter/  the secret filter (in the front; root links only the secrets
#            file's parser and the detectors' names, no Vectorscan)
#   common/  both: configuration and profiles, the privsep messages, logs
COMMON_SRCS := $(addprefix daemon/common/,auditfile.c config.c errmsg.c fdio.c handover.c jsonstrict.c landlock.c \
                 log.c path.c privsep.c procstatus.c profile.c utf8.c)
START_SRCS  := $(addprefix daemon/start/,doctor.c frontexec.c gitdirs.c instance.c keepout.c main.c policy.c \
                 cgsetup.c sandbox_filter.c uidrange.c) \
                 daemon/common/gitdir.c daemon/common/guardnames.c # with the actor: which git directory a worktree has, the names it guards
ROOT_SRCS   := $(addprefix daemon/root/,actor.c check.c initclone.c launcher.c mount.c ns.c runcg.c sandbox.c \
                 seccomp.c supervise.c uidpool.c)
ASRUN_SRCS  := $(addprefix daemon/asrun/,directexec.c job.c notify.c sandbox_run.c usage.c watch.c)
# sharness-actor: a run's file actor, exec'd as the run (root/actor.c).
ACTOR_SRCS  := $(addprefix daemon/asrun/,actor_main.c actor_serve.c agentpaths.c connect_run.c fdpath.c gitpaths.c) \
                 $(addprefix daemon/common/,gitdir.c guardnames.c path.c privsep.c utf8.c)
FRONT_SRCS  := $(addprefix daemon/front/,approval.c audit.c capture.c connguard.c denials.c execute.c front.c \
                 http.c jobs.c live.c lockdown.c loop.c main.c peeruid.c proxy.c proxy_host.c proxy_request.c reply.c request.c runflow.c \
                 runq.c tls.c)
FILTER_SRCS := $(addprefix daemon/filter/,scrub.c scrub_cli.c scrub_detect.c scrub_bloom.c scrub_fp.c scrub_rules.c scrub_tri.c \
                 scrub_vault.c scrub_view.c scrub_wrap.c)
ROOT_FILTER_SRCS := daemon/filter/scrub_detect.c daemon/filter/scrub_vault.c
# Each part sees only the headers it may use: root and start-up code that
# includes a front header does not compile.
INC_common := common
INC_filter := common filter
INC_root   := common root asrun filter
INC_asrun  := common asrun root
INC_start  := common root start filter
INC_front  := common front filter
INC_ALL    := -iquote daemon/common -iquote daemon/root -iquote daemon/asrun -iquote daemon/start -iquote daemon/front -iquote daemon/filter

SHARNESSD_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(START_SRCS) $(ROOT_SRCS) $(ASRUN_SRCS) $(COMMON_SRCS) $(ROOT_FILTER_SRCS))
FRONT_OBJS     := $(patsubst %.c,$(BUILD)/%.o,$(FRONT_SRCS) $(FILTER_SRCS) $(COMMON_SRCS))
# Every daemon object but the two mains, for the unit tests and benchmarks.
DAEMON_LIB_SRCS := $(filter-out daemon/start/main.c daemon/front/main.c daemon/asrun/actor_main.c,$(sort $(COMMON_SRCS) \
                     $(START_SRCS) $(ROOT_SRCS) $(ASRUN_SRCS) $(ACTOR_SRCS) $(FRONT_SRCS) $(FILTER_SRCS)))
DAEMON_LIB_OBJS := $(DAEMON_LIB_SRCS:%.c=$(BUILD)/%.o)
DAEMON_LIB      := $(BUILD)/libsharnessd.a
UNIT_SRCS       := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS       := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
PROBE_SRCS      := $(sort $(wildcard tests/probes/*.c))
PROBE_BINS      := $(PROBE_SRCS:tests/probes/%.c=$(BUILD)/probes/%)

# Keep the unit tests' objects (make would delete them as intermediates).
.SECONDARY:

.PHONY: all deps test-deps run test unit probes clean asan asan-test format tidy install uninstall bench fuzz stress vm-test vm-deps deb

all: $(BUILD)/sharnessd $(BUILD)/sharnessd-front $(BUILD)/sharness-actor $(BUILD)/sharness-client

part_of = $(word 2,$(subst /, ,$(1)))
$(BUILD)/daemon/%.o: daemon/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(addprefix -iquote daemon/,$(INC_$(call part_of,$<))) -c $< -o $@

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC_ALL) -c $< -o $@

$(DAEMON_LIB): $(DAEMON_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# Root's link has no front object: a call from root into front code is an
# undefined reference here.  The check after it fails the build if root's
# image would map libmicrohttpd, GnuTLS or Vectorscan anyway.
$(BUILD)/sharnessd: $(SHARNESSD_OBJS)
	$(CC) $(LDFLAGS) -Wl,--as-needed -o $@ $^ $(ROOT_LIBS)
	@if readelf -d $@ | grep -E 'NEEDED.*(microhttpd|gnutls|libhs)'; then \
		echo "$@ must not link the front's libraries (above)" >&2; rm -f $@; exit 1; fi

# Static (static-pie): it is exec'd inside a run's root, where no loader
# should look for libraries.  Its own objects, built without the
# sanitizers in every build: their runtime needs a /proc/self, which the
# run's root (another pid namespace's /proc) does not give it.
ACTOR_OBJS := $(patsubst %.c,$(BUILD)/actor/%.o,$(ACTOR_SRCS))
$(BUILD)/actor/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(WARN) $(HARDEN) -D_GNU_SOURCE -MMD -MP $(addprefix -iquote daemon/,$(INC_$(call part_of,$<))) -c $< -o $@

$(BUILD)/sharness-actor: $(ACTOR_OBJS)
	$(CC) -static-pie -Wl,-z,relro,-z,now,-z,noexecstack -o $@ $^

$(BUILD)/sharnessd-front: $(FRONT_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(FRONT_LIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(DAEMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# Probes run inside the sandbox: small static binaries that report exact errnos.
$(BUILD)/probes/%: tests/probes/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -static -o $@ $<

unit: $(UNIT_BINS) $(BUILD)/tests/client_unwind
probes: $(PROBE_BINS)

-include client/client.mk
-include bench/bench.mk
-include tests/fuzz/fuzz.mk
-include tests/stress/stress.mk
-include bench/roundtrip/roundtrip.mk
-include install.mk

deps:
	@scripts/deps.sh

# What the tests need besides: the test profile's toolchains.
test-deps:
	@scripts/deps.sh --test

run: deps all
	@scripts/devcerts.sh
	@scripts/run-dev.sh

test: test-deps all unit probes
	@tests/run.sh

# Real systems: debootstrap images booted with their own kernel and systemd
# (tests/vm/run.sh; needs root, qemu and debootstrap).
vm-deps:
	@command -v debootstrap >/dev/null && command -v qemu-system-x86_64 >/dev/null && command -v qemu-img >/dev/null || \
		{ export DEBIAN_FRONTEND=noninteractive; apt-get update -q >/dev/null; \
		  apt-get install -y -q --no-install-recommends debootstrap qemu-system-x86 qemu-utils >/dev/null; }

vm-test: deps vm-deps all probes deb
	@tests/vm/run.sh $(VMS)

# The Debian package, built in a copy of the tree (debian/make-deb.sh;
# DEB_SRC=REV builds a commit instead of the working tree): $(BUILD)/deb/sharness_*.deb.
deb: deps
	@debian/make-deb.sh $(BUILD)/deb

asan:
	$(MAKE) BUILD=build/asan SAN=1 OPT="-O1 -g" all unit probes

# Every test against the ASan+UBSan binaries (probes stay the normal static ones).
asan-test: test-deps asan probes
	@BUILD=build/asan SHARNESS_SANITIZED=1 ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 tests/run.sh

# Static analysis of the product code with the checks .clang-tidy names
# (and why it leaves some out); any finding fails.
# Lines of code per part (the README's figures).
loc:
	@scripts/loc.py

tidy: deps
	clang-tidy --quiet $(sort $(wildcard daemon/*/*.c client/*.c)) -- -std=gnu17 -D_GNU_SOURCE $(INC_ALL)

format:
	clang-format -i daemon/*/*.[ch] client/*.[ch] tests/unit/*.[ch] tests/probes/*.c tests/client/*.c

clean:
	rm -rf $(BUILD)

-include $(patsubst %.c,$(BUILD)/%.d,$(COMMON_SRCS) $(START_SRCS) $(ROOT_SRCS) $(ASRUN_SRCS) $(ACTOR_SRCS) $(FRONT_SRCS) $(FILTER_SRCS)) $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%.d)
-include $(ACTOR_OBJS:.o=.d)
