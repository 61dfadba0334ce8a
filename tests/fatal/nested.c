/*
 * nested.c - run a program under ptrace so that a second stop signal comes
 * in the moment after the kernel took the first for it: the first's handler
 * frame is set up, its handler not yet run, when the second is delivered.
 *
 *   nested PIDFILE FIRST SECOND PROGRAM [ARG...]
 *
 * Writes the program's pid to PIDFILE. When the program's thread stops to
 * be given FIRST (sent from outside), sends it SECOND and lets FIRST go on:
 * the kernel then delivers SECOND on top of FIRST's frame, so that
 * SECOND's handler runs first, as when two signals sent at once reach a
 * thread a moment apart. Every other signal is passed on unchanged. Exits
 * as the program did: its status, or 128+N for death by signal N.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: nested PIDFILE FIRST SECOND PROGRAM [ARG...]\n");
        return 2;
    }
    int first = atoi(argv[2]), second = atoi(argv[3]);
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0) {
            perror("nested: ptrace");
            _exit(3);
        }
        raise(SIGSTOP); /* the tracer sets its options here, before the exec */
        execvp(argv[4], argv + 4);
        perror("nested: exec");
        _exit(127);
    }
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 2;
    fprintf(f, "%d\n", (int)pid);
    fclose(f);
    int sent = 0, st;
    for (;;) {
        if (waitpid(pid, &st, 0) != pid)
            return 2;
        if (WIFEXITED(st))
            return WEXITSTATUS(st);
        if (WIFSIGNALED(st))
            return 128 + WTERMSIG(st);
        if (!WIFSTOPPED(st))
            continue;
        int sig = WSTOPSIG(st);
        if (sig == SIGSTOP && !sent && (st >> 16) == 0) {
            static int opts_set;
            if (!opts_set) { /* the stop before the exec: ours */
                opts_set = 1;
                ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL));
                ptrace(PTRACE_CONT, pid, NULL, NULL);
                continue;
            }
        }
        if (sig == SIGTRAP && (st >> 16) == PTRACE_EVENT_EXEC) {
            ptrace(PTRACE_CONT, pid, NULL, NULL);
            continue;
        }
        if (sig == first && !sent) {
            sent = 1;
            kill(pid, second); /* pending while the thread is stopped here */
        }
        ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
    }
}
