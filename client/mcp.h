/*
 * mcp.h - an MCP server over stdio with one tool, run_command (SPEC §10).
 *
 * JSON-RPC 2.0, one message per line on stdin/stdout (MCP stdio transport);
 * protocol versions 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05.
 * Nothing but protocol messages is written to stdout; diagnostics go to
 * stderr.
 */
#ifndef SHARNESS_CLIENT_MCP_H
#define SHARNESS_CLIENT_MCP_H

#include "conf.h"

/* Serves until stdin closes; returns the process exit code. `profile` is the
 * default profile for calls that name none (NULL: the daemon's default). */
int mcp_main(const struct conf *c, const char *profile);

#endif
