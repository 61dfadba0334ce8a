/* page.c - see page.h. */
#include "base/page.h"

#include <string.h>

void gmg_page_embed_json(struct gmg_buf *b, const char *json, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = NULL;
        size_t skip = 1;
        unsigned char c = (unsigned char)json[i];
        if (c == '<')
            esc = "\\u003c";
        else if (c == '>')
            esc = "\\u003e";
        else if (c == '&')
            esc = "\\u0026";
        else if (c == 0xE2 && i + 2 < n && (unsigned char)json[i + 1] == 0x80 &&
                 ((unsigned char)json[i + 2] == 0xA8 || (unsigned char)json[i + 2] == 0xA9)) {
            esc = (unsigned char)json[i + 2] == 0xA8 ? "\\u2028" : "\\u2029";
            skip = 3;
        }
        if (!esc)
            continue;
        gmg_buf_put(b, json + from, i - from);
        gmg_buf_put(b, esc, 6);
        i += skip - 1;
        from = i + 1;
    }
    gmg_buf_put(b, json + from, n - from);
}

void gmg_page_write(struct gmg_buf *b, const char *json, size_t n)
{
    static const char head[] =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        /* nothing from a network, ever: the page's own script and style only */
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
        "<title>gpumemguard report</title>\n<style>\n";
    gmg_buf_put(b, head, sizeof head - 1);
    gmg_buf_put(b, gmg_page_css, strlen(gmg_page_css));
    static const char mid[] =
        "</style>\n</head>\n<body>\n<div id=\"app\"><noscript>This report is drawn by the page's own JavaScript: "
        "allow scripts for this file, or read the JSON report (the data below).</noscript></div>\n"
        "<script type=\"application/json\" id=\"gmg-data\">";
    gmg_buf_put(b, mid, sizeof mid - 1);
    gmg_page_embed_json(b, json, n);
    static const char tail0[] = "</script>\n<script>\n";
    gmg_buf_put(b, tail0, sizeof tail0 - 1);
    gmg_buf_put(b, gmg_page_js, strlen(gmg_page_js));
    static const char tail1[] = "</script>\n</body>\n</html>\n";
    gmg_buf_put(b, tail1, sizeof tail1 - 1);
}
