/*
 * frames.c - the static client's start does not register its unwind tables.
 *
 * A -static link starts with gcc's crtbeginT.o, which hands the whole
 * .eh_frame to libgcc's __register_frame_info (glibc's libc.a pulls the
 * unwinder in for thread cancellation).  Since gcc 13 that call sorts every
 * frame description at once: with OpenSSL linked in, 0.3-0.5 ms of each
 * client's start (Debian 13's gcc 14; gcc 12's libgcc defers it to the first
 * unwind, which the client never does).  client.mk links with --eh-frame-hdr,
 * so the unwinder finds the tables through the program header
 * (dl_iterate_phdr), as in a dynamic or static-pie program and as clang
 * links -static; and with --wrap, so crtbeginT.o calls these instead.
 * tests/client/unwind.c, linked the same way, proves a cancelled thread
 * still unwinds.
 */
struct object;

void __wrap___register_frame_info(const void *eh_frame, struct object *ob);
void *__wrap___deregister_frame_info(const void *eh_frame);

void __wrap___register_frame_info(const void *eh_frame, struct object *ob)
{
	(void)eh_frame;
	(void)ob;
}

/* Nothing was registered: nothing to give back (crtbeginT.o ignores it). */
void *__wrap___deregister_frame_info(const void *eh_frame)
{
	(void)eh_frame;
	return 0;
}
