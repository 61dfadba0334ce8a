/* unwlib.h - the libraries of tests/unwind/unwindtest.c */
long fp_level(int n, int keep);                  /* in the program  */
void leaf_alloc(int keep);                       /* in the program  */
long nofp_level(int n, int keep);                /* libunwmix.so    */
long nofp_site_small(int keep);                  /* libunwmix.so    */
long nofp_site_big(int keep);                    /* libunwmix.so    */
long lib_alloc(int n, int keep);                 /* libunwA/B.so    */
int lib_run_threads(void (*body)(void), int n);  /* libunwthr.so    */
