/* Process facts every format decodes alike: the signal's siginfo_t. */
#include "dump.h"

#include <stdint.h>

/* si_code values and siginfo_t's layout from the Linux kernel's
 * include/uapi/asm-generic/siginfo.h: SI_USER 0 (kill), SI_QUEUE -1
 * (sigqueue), SI_TKILL -6 (tkill, tgkill) fill _kill/_rt, whose si_pid and
 * si_uid sit where _sigfault's si_addr does (offset 16 on 64-bit Linux);
 * SI_KERNEL 0x80 carries neither.  SIGILL, SIGFPE, SIGSEGV, SIGBUS and
 * SIGTRAP with a positive code (SEGV_MAPERR ...) carry si_addr. */
void dump_signal_decode(struct dump_signal *s, uint64_t word)
{
	int n = s->number, code = s->code;
	s->has_address = s->has_sender = false;
	if (!s->has_code)
		return;
	if (code == 0 || code == -1 || code == -6) {
		/* a pid is positive: anything else is not a sender's (lldb's
		 * minidump of a core writes such words) */
		s->sender_pid = (int32_t)(word & 0xffffffffu);
		s->sender_uid = (uint32_t)(word >> 32);
		s->has_sender = s->sender_pid > 0;
	} else if (code > 0 && code != 0x80 && (n == 4 || n == 5 || n == 7 || n == 8 || n == 11)) {
		s->has_address = true;
		s->address = word;
	}
}

/* si_code's values: include/uapi/asm-generic/siginfo.h (SI_USER 0,
 * SI_KERNEL 0x80, SI_QUEUE -1, SI_TIMER -2, SI_TKILL -6; a fault's codes
 * are positive) */
const char *dump_signal_origin(int code)
{
	if (code > 0 && code != 0x80)
		return "fault";
	switch (code) {
	case 0: return "kill";
	case -6: return "tkill";
	case -1: return "sigqueue";
	case -2: return "timer";
	case 0x80: return "kernel";
	default: return "other";
	}
}
