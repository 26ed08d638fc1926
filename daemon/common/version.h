/*
 * version.h - the one version of sharness: sharnessd --version, the
 * client's --version and its MCP serverInfo, the man pages' headers
 * (tests/e2e/man.sh) and debian/changelog (debian/rules) all name it.
 */
#ifndef SHARNESS_VERSION_H
#define SHARNESS_VERSION_H

#define SHARNESS_VERSION "0.1.0"

#endif
