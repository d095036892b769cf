/*
 * cfaults: what a program's own faults do when it has a handler for them, as Linux 6.1 does
 * it (its `force_sig_fault`), and the instructions that UMIP stops in ring 3, which Linux
 * answers with made-up values (its UMIP emulation, arch/x86/kernel/umip.c). Built with
 * `musl-gcc -static`, it runs unchanged on Linux and on cfslab; tests/tests/userland.rs
 * checks that both print the same lines.
 *
 * - A NULL write reaches a SIGSEGV handler with SEGV_MAPERR, the address, and the page
 *   fault's trap number, error code and CR2 in the ucontext; siglongjmp leaves it.
 * - A write to a PROT_NONE page: SEGV_ACCERR.
 * - Divide by zero (SIGFPE, FPE_INTDIV), ud2 (SIGILL, ILL_ILLOPN): the address of the
 *   instruction; the handler moves the ucontext's rip past it and sets rax, and the program
 *   goes on with both.
 * - int3 (SIGTRAP) returns to the next instruction; the trap flag gives TRAP_TRACE after
 *   the instruction it stepped.
 * - A blocked or ignored SIGSEGV still kills; so does a fault in a handler for it.
 * - sgdt, sidt, smsw, sldt and str, in register and memory forms, answer Linux's dummy
 *   values (where the CPU has UMIP; `cfaults` says when it does not, and checks nothing).
 *
 * The checks name what they see, so that a difference shows in the line.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "check.h"

static sigjmp_buf jump;
static volatile int seen_signo, seen_code;
static volatile uintptr_t seen_addr, seen_rip;
static volatile long seen_trapno, seen_err, seen_cr2, seen_rcx;

/* Records what the handler was told. */
static void record(int signo, siginfo_t *info, ucontext_t *uc)
{
	seen_signo = signo;
	seen_code = info->si_code;
	seen_addr = (uintptr_t)info->si_addr;
	seen_rip = uc->uc_mcontext.gregs[REG_RIP];
	seen_trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	seen_err = uc->uc_mcontext.gregs[REG_ERR];
	seen_cr2 = uc->uc_mcontext.gregs[REG_CR2];
	seen_rcx = uc->uc_mcontext.gregs[REG_RCX];
}

static void jump_out(int signo, siginfo_t *info, void *uc)
{
	record(signo, info, uc);
	siglongjmp(jump, 1);
}

/* Skips the two-byte instruction that faulted, with 42 in rax. */
static void skip_two(int signo, siginfo_t *info, void *ucontext)
{
	ucontext_t *uc = ucontext;
	record(signo, info, uc);
	uc->uc_mcontext.gregs[REG_RIP] += 2;
	uc->uc_mcontext.gregs[REG_RAX] = 42;
}

static void just_record(int signo, siginfo_t *info, void *uc)
{
	record(signo, info, uc);
}

/* A handler that faults itself, with its own signal blocked. */
static void fault_again(int signo, siginfo_t *info, void *uc)
{
	(void)signo, (void)info, (void)uc;
	volatile int *volatile nowhere = NULL;
	*nowhere = 1;
}

static void on(int signo, void (*handler)(int, siginfo_t *, void *))
{
	struct sigaction sa = { 0 };
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(signo, &sa, NULL);
}

static void segv(void)
{
	on(SIGSEGV, jump_out);
	if (sigsetjmp(jump, 1) == 0) {
		*(volatile int *)0 = 1;
		check(0, "a NULL write goes on");
	}
	check(seen_signo == SIGSEGV && seen_code == SEGV_MAPERR && seen_addr == 0,
	      "a NULL write: SIGSEGV to its handler, SEGV_MAPERR, si_addr 0");
	check(seen_trapno == 14 && seen_err == 6 && seen_cr2 == 0,
	      "its ucontext: trap 14, error 6 (a user write), cr2 0");
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	check(!sigismember(&now, SIGSEGV), "siglongjmp out of the handler unblocks SIGSEGV");

	volatile int *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sigsetjmp(jump, 1) == 0)
		page[2] = 1;
	check(seen_code == SEGV_ACCERR && seen_addr == (uintptr_t)&page[2],
	      "a write to a PROT_NONE page: SEGV_ACCERR at its address");
	munmap((void *)page, 4096);
	signal(SIGSEGV, SIG_DFL);
}

static void skipped(void)
{
	long rax, at;
	on(SIGFPE, skip_two);
	__asm__ volatile("lea 1f(%%rip), %[at]\n\t"
			 "mov $7, %%eax\n\t"
			 "xor %%edx, %%edx\n\t"
			 "xor %%ecx, %%ecx\n"
			 "1:\tidivl %%ecx"
			 : "=a"(rax), [at] "=r"(at)
			 :
			 : "rcx", "rdx");
	check(seen_signo == SIGFPE && seen_code == FPE_INTDIV, "divide by zero: SIGFPE, FPE_INTDIV");
	check(seen_addr == (uintptr_t)at && seen_rip == (uintptr_t)at && seen_trapno == 0,
	      "si_addr and the ucontext's rip are the idiv's, trap 0");
	check(rax == 42, "the handler moved rip past it and set rax: the program goes on");

	on(SIGILL, skip_two);
	__asm__ volatile("lea 1f(%%rip), %[at]\n\t"
			 "mov $5, %%ecx\n"
			 "1:\tud2"
			 : "=a"(rax), [at] "=r"(at)
			 :
			 : "rcx");
	check(seen_signo == SIGILL && seen_code == ILL_ILLOPN && seen_addr == (uintptr_t)at,
	      "ud2: SIGILL, ILL_ILLOPN, at the instruction");
	check(seen_trapno == 6 && seen_rcx == 5 && rax == 42,
	      "trap 6, the registers as they were, and the handler's rax");

	on(SIGTRAP, just_record);
	__asm__ volatile("lea 1f(%%rip), %[at]\n\t"
			 "int3\n"
			 "1:"
			 : [at] "=r"(at));
	check(seen_signo == SIGTRAP && seen_rip == (uintptr_t)at && seen_trapno == 3,
	      "int3: SIGTRAP, and the handler returns after it");
	printf("int3: si_code %d, si_addr %s\n", seen_code, seen_addr ? "set" : "0");
}

/* Single-stepping stops here: the trap flag off in the ucontext, for the return. */
static void stop_stepping(int signo, siginfo_t *info, void *ucontext)
{
	ucontext_t *uc = ucontext;
	record(signo, info, uc);
	uc->uc_mcontext.gregs[REG_EFL] &= ~0x100L;
}

static void single_step(void)
{
	long after;
	on(SIGTRAP, stop_stepping);
	/* The trap comes once the instruction after popf has run. */
	__asm__ volatile("pushf\n\t"
			 "orq $0x100, (%%rsp)\n\t"
			 "popf\n\t"
			 "nop\n"
			 "1:\tlea 1b(%%rip), %0"
			 : "=r"(after)
			 :
			 : "cc");
	check(seen_signo == SIGTRAP && seen_code == TRAP_TRACE && seen_trapno == 1,
	      "the trap flag: SIGTRAP, TRAP_TRACE, trap 1");
	check(seen_addr == (uintptr_t)after && seen_rip == (uintptr_t)after,
	      "after the instruction it stepped, where the handler returns");
	signal(SIGTRAP, SIG_DFL);
}

/* The child's status when it faults with SIGSEGV blocked, ignored, or in its handler. */
static int child_faults(int how)
{
	pid_t child = fork();
	if (child == 0) {
		sigset_t segv;
		sigemptyset(&segv);
		sigaddset(&segv, SIGSEGV);
		on(SIGSEGV, how == 2 ? fault_again : just_record);
		if (how == 0)
			sigprocmask(SIG_BLOCK, &segv, NULL);
		else if (how == 1)
			signal(SIGSEGV, SIG_IGN);
		*(volatile int *)0 = 1;
		_exit(0);
	}
	int status;
	waitpid(child, &status, 0);
	return WIFSIGNALED(status) ? WTERMSIG(status) : -WEXITSTATUS(status);
}

static void still_kills(void)
{
	check(child_faults(0) == SIGSEGV, "a blocked SIGSEGV with a handler still kills");
	check(child_faults(1) == SIGSEGV, "an ignored SIGSEGV still kills");
	check(child_faults(2) == SIGSEGV, "a fault again inside its handler kills");
}

/* The 10 bytes sgdt and sidt store: the limit, then the base. */
struct __attribute__((packed)) table {
	uint16_t limit;
	uint64_t base;
};

static const char *which(uint64_t base)
{
	if (base == 0xfffffffffffe0000)
		return "Linux's dummy GDT";
	if (base == 0xffffffffffff0000)
		return "Linux's dummy IDT";
	return "a real table";
}

static struct table in_data;

static void umip_tables(void)
{
	struct table t[3];
	memset(t, 0xaa, sizeof t);
	__asm__ volatile("sgdt %0" : "=m"(t[0]));
	__asm__ volatile("sidt (%0)" : : "r"(&t[1]) : "memory");
	long index = 2;
	/* base + index * 2 + disp: a SIB byte and a displacement. */
	__asm__ volatile("sgdt 6(%0,%1,2)" : : "r"((char *)&t[2] - 10), "r"(index) : "memory");
	/* A static: the compiler names it rip-relative. */
	__asm__ volatile("sidt %0" : "=m"(in_data));
	if (t[0].base != 0xfffffffffffe0000) {
		/* No UMIP, or no emulation: nothing here is the same on every host. */
		printf("umip: sgdt shows %s; the UMIP checks are skipped\n", which(t[0].base));
		return;
	}
	printf("sgdt (%%rax): limit %#x, %s\n", t[0].limit, which(t[0].base));
	printf("sidt (%%rax): limit %#x, %s\n", t[1].limit, which(t[1].base));
	printf("sgdt 6(%%rax,%%rcx,2): limit %#x, %s\n", t[2].limit, which(t[2].base));
	printf("sidt in_data(%%rip): limit %#x, %s\n", in_data.limit, which(in_data.base));
}

static void umip_registers(void)
{
	uint64_t r, r9;
	uint16_t word = 0xaaaa;
	r = -1;
	__asm__ volatile("smsw %k0" : "+r"(r));
	printf("smsw %%eax: %#lx\n", r);
	r = -1;
	__asm__ volatile("smsw %q0" : "+r"(r));
	printf("smsw %%rax: %#lx\n", r);
	r = -1;
	__asm__ volatile("smsw %w0" : "+r"(r));
	printf("smsw %%ax: %#lx\n", r);
	__asm__ volatile("mov $-1, %%r9\n\tsmsw %%r9d\n\tmov %%r9, %0" : "=r"(r9) : : "r9");
	printf("smsw %%r9d: %#lx\n", r9);
	__asm__ volatile("smsw %0" : "=m"(word));
	printf("smsw (mem): %#x\n", word);
	r = -1;
	__asm__ volatile("str %k0" : "+r"(r));
	printf("str %%eax: %#lx\n", r);
	r = -1;
	__asm__ volatile("sldt %k0" : "+r"(r));
	printf("sldt %%eax: %#lx\n", r);
	word = 0xaaaa;
	__asm__ volatile("str %0" : "=m"(word));
	printf("str (mem): %#x\n", word);
}

/* A store the emulation cannot make: SIGSEGV, SEGV_MAPERR, at the operand's address. */
static void umip_bad_operand(void)
{
	on(SIGSEGV, jump_out);
	if (sigsetjmp(jump, 1) == 0)
		__asm__ volatile("sgdt (%0)" : : "r"(0x10)  : "memory");
	printf("sgdt to unmapped memory: signal %d, code %d, si_addr %#lx, trap %ld, error %ld\n",
	       seen_signo, seen_code, (long)seen_addr, seen_trapno, seen_err);
	signal(SIGSEGV, SIG_DFL);
}

static void umip(void)
{
	umip_tables();
	if (in_data.limit == 0 && in_data.base == 0xffffffffffff0000) {
		umip_registers();
		umip_bad_operand();
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	segv();
	skipped();
	single_step();
	still_kills();
	umip();
	if (failures)
		return 1;
	printf("cfaults: all checks passed\n");
	return 0;
}
