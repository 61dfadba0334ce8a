/* nounwind.c - libnounwind.so, built without unwind tables and without
 * frame pointers, between coroutine.c's callers and its do_alloc. */
void do_alloc(int k);
__attribute__((noinline)) int nounw_inner(int k)
{
    volatile int pad[8];
    pad[0] = k;
    do_alloc(k);
    return pad[0];
}
__attribute__((noinline)) int nounw_outer(int k)
{
    volatile int pad[8];
    pad[0] = k;
    int r = nounw_inner(k + 1);
    return r + pad[0];
}
