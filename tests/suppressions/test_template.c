/* test_template.c - the suppressions' template match (base/suppress.c):
 * '*' wildcards, '^' and '$' anchors, and the cases a first-occurrence
 * match without backtracking gets wrong (a '$'-anchored pattern whose last
 * piece also occurs earlier in the name). */
#include "base/suppress.h"

#include <stdio.h>

static int checks, failures;

static void t(const char *templ, const char *s, int want)
{
    checks++;
    int got = gmg_template_match(templ, s);
    if (got != want) {
        printf("FAIL match('%s', '%s') = %d, want %d\n", templ, s ? s : "(null)", got, want);
        failures++;
    }
}

int main(void)
{
    /* plain pieces: anywhere, in order */
    t("alloc", "my_alloc_fn", 1);
    t("alloc", "my_free_fn", 0);
    t("a*c", "xxabxxcxx", 1);
    t("c*a", "abc", 0);
    t("", "anything", 1);
    t("*", "anything", 1);
    t("x", "", 0);
    t("x", NULL, 0);
    /* '^' anchors the start */
    t("^leak_", "leak_linear", 1);
    t("^leak_", "my_leak_linear", 0);
    t("^*leak_", "my_leak_linear", 1);
    t("^lib*.so", "libx.so.1", 1);
    /* '$' anchors the end, with backtracking */
    t("foo$", "foofoo", 1);
    t("foo$", "foobar", 0);
    t("*alloc$", "alloc_and_alloc", 1);
    t("alloc$", "alloc_and_alloc", 1);
    t("lib*.so$", "/usr/lib/libx.so.1/libx.so", 1);
    t("lib*.so$", "/usr/lib/libx.so.1", 0);
    t("^foo$", "foo", 1);
    t("^foo$", "foofoo", 0);
    t("^a*b*c$", "aXbYbZc", 1);
    t("^a*b*c$", "aXbYbZcd", 0);
    t("^a*a*a$", "aaaa", 1);
    t("^a*a*a$", "aa", 0);
    t("x*$", "x then anything", 1);
    t("ab*ab$", "abab", 1);
    t("ab*ab$", "aab", 0);
    t("^*$", "any", 1);
    /* the first '$' ends the template */
    t("so$junk", "libx.so", 1);
    /* long names: no exponential backtracking */
    t("*a*a*a*a*a*a*a*b$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0);
    printf("template match: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
