/*
 * page.h - the HTML report page (base layer: the library's html format and
 * the command's `view` share it). One self-contained page: its own style
 * and plain JavaScript (src/report/page/, built in as C strings), and the
 * report's JSON set into a <script type="application/json"> element, with
 * every '<', '>', '&', U+2028 and U+2029 written as a \uXXXX escape, so
 * that no name in the report can end that element or the page's script.
 * The page reads the data with JSON.parse and sets text as text.
 */
#ifndef GMG_BASE_PAGE_H
#define GMG_BASE_PAGE_H

#include <stddef.h>

#include "base/buf.h"

/* The newest JSON report schema the page (and `gpumemguard view`) reads. */
#define GMG_REPORT_SCHEMA 1

/* How many groups of each list the page carries: the rest are summed into
 * "LIST_folded". The run's page (report/html.c) and `view` cut alike, so
 * that both make the same page of one report. */
#define GMG_PAGE_GROUPS 1000

/* The page around `json` (n bytes of one well-formed JSON document). */
void gmg_page_write(struct gmg_buf *b, const char *json, size_t n);

/* `json` with '<', '>', '&', U+2028 and U+2029 escaped (valid only in a
 * well-formed JSON document, where those stand inside strings alone). */
void gmg_page_embed_json(struct gmg_buf *b, const char *json, size_t n);

extern const char gmg_page_css[], gmg_page_js[];

#endif
