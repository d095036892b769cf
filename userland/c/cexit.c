/*
 * cexit: the smallest static musl C program, which microbench execs to measure what an
 * `execve` of a C program costs (its start-up through musl's __libc_start_main included):
 * it returns 0 from main, and so ends through exit() and _exit.
 *
 * Built several times (boot/src/userland.rs) with a padding of PAD_KIB kibibytes in one
 * section, to show how an exec's cost grows with the binary: PAD_DATA puts it in .data
 * (initialised, writable: in the file), PAD_RODATA in .rodata (read-only: in the file) and
 * PAD_BSS in .bss (writable, zero: not in the file). Each padded array is reached through
 * a volatile read, so that the compiler and linker keep it; the program never touches the
 * rest, as a large program touches little of itself in a short run.
 */

#if defined(PAD_DATA)
/* Non-zero, so that the array is in .data rather than .bss. */
char pad[PAD_KIB * 1024] = { 1 };
#elif defined(PAD_RODATA)
const char pad[PAD_KIB * 1024] = { 1 };
#elif defined(PAD_BSS)
char pad[PAD_KIB * 1024];
#endif

int main(void)
{
#if defined(PAD_DATA) || defined(PAD_RODATA) || defined(PAD_BSS)
	/* One byte of the padding, read as the program runs. */
	return *(volatile const char *)&pad[0] == 7;
#else
	return 0;
#endif
}
