/*
 * html.c - the HTML report: one self-contained page (base/page.h) that
 * draws the JSON report it embeds. So that a run with a million live
 * allocations in a hundred thousand stacks still gives a page of a few
 * megabytes that opens in a second, each list of groups keeps its
 * GMG_PAGE_GROUPS (base/page.h) biggest; the rest are summed into
 * "LIST_folded", which the page shows as "other" and says so. The JSON
 * report lists them all.
 */
#include "report/report.h"

#include "base/page.h"

void gmg_report_html(const struct gmg_report *r, struct gmg_buf *b)
{
    struct gmg_buf json = { 0 };
    gmg_report_json_capped(r, &json, GMG_PAGE_GROUPS);
    if (json.failed) {
        b->failed = 1;
    } else {
        gmg_page_write(b, json.p, json.len);
    }
    gmg_buf_free(&json);
}
