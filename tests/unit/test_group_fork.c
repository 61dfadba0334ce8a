/*
 * test_group_fork.c - cluster/group.c's state as a fork() child inherits it
 * when the parent forked while another of its threads was moving what it
 * counted while waiting for the segment into its slot (join_locked: no
 * fork handler takes the group's lock, so nothing keeps a fork out of that
 * move). The child's handler must start it afresh: its first free must
 * return, not wait for a move no thread of the child will ever finish.
 */
#include "cluster/group.c"

#include <signal.h>
#include <sys/wait.h>

int main(void)
{
    __atomic_store_n(&member_pid, getpid(), __ATOMIC_RELAXED);
    __atomic_store_n(&owed_moving, 1, __ATOMIC_SEQ_CST); /* the parent's mover, mid-move */
    pid_t c = fork();
    if (c == 0) {
        gmg_group_atfork_child(); /* guard.c's child handler */
        alarm(5);
        g_release(0, 4096); /* a free of the child's own allocation */
        _exit(0);
    }
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) != c) {
        perror("fork");
        return 1;
    }
    if (WIFSIGNALED(st)) {
        printf("FAIL the child's free waited for ever for a move its parent was making at the fork\n");
        return 1;
    }
    printf("ok the child's free returns at once\n");
    return 0;
}
