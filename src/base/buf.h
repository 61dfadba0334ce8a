/*
 * buf.h - a growing text buffer: reports are formatted whole in memory and
 * written in one go. A failed allocation marks the buffer failed; writers
 * need not check each call.
 */
#ifndef GMG_BASE_BUF_H
#define GMG_BASE_BUF_H

#include <stddef.h>

struct gmg_buf {
    char *p;
    size_t len, cap;
    int failed;
};

void gmg_buf_printf(struct gmg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gmg_buf_put(struct gmg_buf *b, const char *s, size_t n);
/* The length (1-4) of the well-formed UTF-8 sequence p starts with, 0 when
 * its first byte starts none (a NUL-terminated string). */
size_t gmg_utf8_seq(const char *p);
/* n, less the bytes of a UTF-8 character that a cut of s at n split (its
 * lead byte promises more bytes than are left before n): where to cut s. */
size_t gmg_utf8_cut(const char *s, size_t n);
/* A JSON string literal, quotes included; bytes of no well-formed UTF-8
 * sequence are written as U+FFFD. */
void gmg_buf_json_str(struct gmg_buf *b, const char *s);
/* A name in a line of text (a Python file or function name, a symbol):
 * control characters (C0, DEL, C1 in UTF-8, and a byte of 0x80-0x9f
 * outside a UTF-8 sequence: a lone 0x9b is CSI to an 8-bit terminal)
 * written as \n, \r, \t or \xHH (other bytes as the name has them), so
 * that a name holding a newline cannot make a line of its own nor an
 * escape sequence reach a terminal ("" for NULL). */
void gmg_buf_text_str(struct gmg_buf *b, const char *s);
void gmg_buf_free(struct gmg_buf *b);

/* A size as people read it: "3.0 MiB (3145728 bytes)", or "512 bytes" and
 * "1 byte" below 1 KiB. Returns out. */
char *gmg_fmt_size(char *out, size_t n, unsigned long long bytes);
#define GMG_SIZE_LEN 64

#endif
