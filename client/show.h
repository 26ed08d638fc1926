/*
 * show.h - printing text that came from elsewhere (a requester's command, its
 * stdin and env, a daemon's reply) to a person's terminal so that what they see
 * is what the bytes are: nothing a terminal would interpret reaches it raw.
 *
 * Escapes (docs/client.md "What the approver sees"):
 *   \\  a backslash          \t \n \r  tab, newline, carriage return
 *   \e  ESC (0x1b)           \xNN      any other C0 byte, DEL, a byte that is not UTF-8
 *   \uXXXX  C1 controls (U+0080-U+009F), bidi controls (U+061C, U+200E-U+200F,
 *           U+202A-U+202E, U+2066-U+2069), zero-width and invisible format
 *           characters (U+00AD, U+180E, U+200B-U+200D, U+2028-U+202F, U+205F-U+2064,
 *           U+FEFF, U+FFF9-U+FFFB) and U+FFFD (a byte the daemon replaced)
 *   \UXXXXXXXX  tag characters (U+E0000-U+E007F)
 * After each \n the text continues on a new line that starts with `cont`, so a
 * script stays readable and no line of it can pass for one of ours.
 */
#ifndef SHARNESS_CLIENT_SHOW_H
#define SHARNESS_CLIENT_SHOW_H

#include <stdio.h>

void show_text(FILE *out, const char *s, const char *cont);

#endif
