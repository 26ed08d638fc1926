/*
 * scrub_view.h - a decoded view of a window for the secret filter: ANSI
 * escape sequences removed and JSON string escapes decoded, with a map back
 * to the raw bytes, so a token coloured by `grep --color` or a PEM block
 * inside a JSON string is found and the raw span around it redacted.
 *
 * Trust: hostile bytes; the view is never longer than the raw window.
 */
#ifndef SHARNESS_SCRUB_VIEW_H
#define SHARNESS_SCRUB_VIEW_H

#include <stddef.h>
#include <stdint.h>

/* Where the first escape the view would decode (an ANSI sequence, a JSON or
 * percent escape) starts, searching raw[from, n); n when there is none, and
 * then the view is not needed.  The caller may pass a `from` it knows has no
 * escape before it. */
size_t scrub_view_first(const unsigned char *raw, size_t n, size_t from);

/* Build the view of raw[0, n) into view (capacity n) and map (capacity n + 1),
 * given first = scrub_view_first(raw, n, 0):
 * map[i] is the raw offset where view byte i came from; map[len] = n.
 * Returns the view length. */
size_t scrub_view_build(const unsigned char *raw, size_t n, size_t first, unsigned char *view, uint32_t *map);

/* Raw offset just past the raw bytes that produced view byte i. */
size_t scrub_view_raw_end(const unsigned char *raw, size_t n, const uint32_t *map, size_t i);

#endif
