#!/bin/sh
# The platforms' readings of calls and PLT stubs (test-callsite.c) on code
# the system's assemblers made, for x86-64 (as, ld) and aarch64
# (aarch64-linux-gnu-as and -ld, Debian's binutils-aarch64-linux-gnu):
# direct calls (their targets), calls through registers and memory (and
# aarch64's pointer-authenticating BLRAA), code that is no call, and a
# PLT stub of each shape binutils writes.  The addresses are the linked
# program's symbols.  TAP: one line per architecture, a skip naming the
# missing assembler.
srcdir=${srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
. "$srcdir/src/tests/lib/tap.sh"
bin=${TEST_CALLSITE:-./test-callsite}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-callsite.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# run ARCH PREFIX: assemble $tmp/ARCH.s with PREFIX's tools, link it at
# 0x401000 and check the cases in $tmp/ARCH.cases (symbol names, which
# sym() turns into addresses)
run() {
	arch=$1 pre=$2 flags=$3
	if ! command -v "${pre}as" >/dev/null 2>&1 || ! command -v "${pre}ld" >/dev/null 2>&1; then
		tap_skip "$arch calls and PLT stubs" "no ${pre}as or ${pre}ld (binutils)"
		return
	fi
	if ! "${pre}as" $flags -o "$tmp/$arch.o" "$tmp/$arch.s" 2>"$tmp/err" ||
	   ! "${pre}ld" -static -e start -Ttext=0x401000 -o "$tmp/$arch" "$tmp/$arch.o" 2>>"$tmp/err" ||
	   ! "${pre}objcopy" -O binary --only-section=.text "$tmp/$arch" "$tmp/$arch.bin" 2>>"$tmp/err"; then
		tap_diag <"$tmp/err"
		tap_fail "$arch calls and PLT stubs" "cannot assemble the cases"
		return
	fi
	"${pre}nm" "$tmp/$arch" >"$tmp/$arch.syms"
	sym() { awk -v n="$1" '$3 == n { print $1 }' "$tmp/$arch.syms"; }
	while read -r kind a b c; do
		case $kind in
		call) echo "call $(sym "$a") $b $(if [ "$c" = - ]; then echo 0; else sym "$c"; fi)" ;;
		plt) echo "plt $(sym "$a") $(sym "$b")" ;;
		esac
	done <"$tmp/$arch.cases" >"$tmp/$arch.in"
	if "$bin" "$arch" "$tmp/$arch.bin" "$(sym start)" <"$tmp/$arch.in" >"$tmp/out" 2>&1; then
		tap_ok "$arch calls and PLT stubs: $(tail -n 1 "$tmp/out")"
	else
		tap_diag <"$tmp/out"
		tap_fail "$arch calls and PLT stubs" "see above"
	fi
}

cat >"$tmp/x86_64.s" <<'ASM'
	.text
	.globl	start
start:	.fill	16, 1, 0x90
callee:	nop
	call	callee
r_direct:
	call	*%rax
r_reg:
	call	*%r11
r_rex:
	call	*8(%rbx)
r_disp8:
	call	*0x100(%rsp)
r_sib32:
	call	*slot(%rip)
r_rip:
	nop
	nop
	nop
	nop
	nop
	mov	%rax, %rbx
r_none:
	.p2align 4
stub:	endbr64
	bnd jmp	*slot(%rip)
	.p2align 4
stub2:	jmp	*slot2(%rip)
	.data
	.p2align 3
slot:	.quad	0
slot2:	.quad	0
ASM
cat >"$tmp/x86_64.cases" <<'CASES'
call r_direct direct callee
call r_reg indirect -
call r_rex indirect -
call r_disp8 indirect -
call r_sib32 indirect -
call r_rip indirect -
call r_none none -
plt stub slot
plt stub2 slot2
CASES
run x86_64 "" ""

cat >"$tmp/aarch64.s" <<'ASM'
	.text
	.globl	start
start:	nop
callee:	nop
	bl	callee
r_direct:
	blr	x3
r_reg:
	blraa	x3, x4
r_pac:
	mov	x0, x1
r_none:
	.p2align 4
stub:	bti	c
	adrp	x16, slot
	ldr	x17, [x16, :lo12:slot]
	add	x16, x16, :lo12:slot
	br	x17
stub2:	adrp	x16, slot2
	ldr	x17, [x16, :lo12:slot2]
	add	x16, x16, :lo12:slot2
	br	x17
	.data
	.p2align 3
	.zero	0x2000
slot:	.quad	0
slot2:	.quad	0
ASM
cat >"$tmp/aarch64.cases" <<'CASES'
call r_direct direct callee
call r_reg indirect -
call r_pac indirect -
call r_none none -
plt stub slot
plt stub2 slot2
CASES
run aarch64 aarch64-linux-gnu- "-march=armv8.5-a"

tap_done
