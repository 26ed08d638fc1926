/*
 * peeruid.h - which local uid holds the other end of a loopback TCP
 * connection, from the kernel's socket table (sock_diag, as `ss -e` reads
 * it).  connguard.c shares the places of connections that have shown no
 * verified certificate yet between uids, so that one local account's
 * flood of idle connections does not shut the others out (review s37
 * front 2).
 *
 * Trust: the kernel's answer; the socket is opened before the front's
 * lockdown (lockdown.c allows no netlink socket to be made after it).
 */
#ifndef SHARNESS_PEERUID_H
#define SHARNESS_PEERUID_H

/* A sock_diag socket, or -1 (then every peer's uid is unknown). */
int peeruid_open(void);

/* The uid of the process that made the peer's socket of the connected TCP
 * socket `fd` (an IPv4 peer of a dual-stack listener too: the kernel looks
 * a v4-mapped address up as IPv4; test_loop checks it), or -1 when the kernel does not say (the peer is in another network
 * namespace, or gone already). */
long peeruid_of(int diag, int fd);

#endif
