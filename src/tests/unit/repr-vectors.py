"""Print test vectors for the int and float formatters, the expected text
coming from this interpreter's own repr().

  int DIGITS NEG TEXT     DIGITS: comma-separated 30-bit digits, least
                          significant first; TEXT "-" when Python refuses
                          to print it (more than int_max_str_digits)
  float BITS TEXT         BITS: the IEEE-754 double as 16 hex digits
"""
import random
import struct
import sys

rng = random.Random(20261122)
limit = getattr(getattr(sys, "int_info", None), "default_max_str_digits", 0) or 0
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)


def digits30(n):
    n = abs(n)
    out = []
    while n:
        out.append(n & ((1 << 30) - 1))
        n >>= 30
    return out


ints = [0, 1, -1, 7, 2 ** 30 - 1, 2 ** 30, 2 ** 60, -(2 ** 70), 2 ** 100, 10 ** 18, 10 ** 27 - 1,
        10 ** 4299, -(10 ** 4299), 10 ** 4300, 2 ** 14300]
for bits in (8, 31, 62, 63, 64, 65, 100, 300, 1000, 5000, 14000):
    for _ in range(20):
        ints.append(rng.getrandbits(bits) * rng.choice((1, -1)))
for n in ints:
    text = str(n)
    ndec = len(text.lstrip("-"))
    if limit and ndec > limit:
        text = "-"
    print("int %s %d %s" % (",".join(str(d) for d in digits30(n)) or "-", 1 if n < 0 else 0, text))

floats = [0.0, -0.0, 0.1, -2.5, 1e300, 1e-300, 5e-324, 1.7976931348623157e308, 1e16, 1e15, 1e-4,
          1e-5, 123456789012345.6, 1.0, 100.0, 0.5, 2.0 ** 53, 2.0 ** 54, float("inf"),
          float("-inf"), float("nan"), 1 / 3.0, 2 / 3.0, 9007199254740993.0]
for e in range(-330, 310, 7):
    floats.append(10.0 ** e if e > -324 else 0.0)
for _ in range(3000):
    floats.append(struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0])
for _ in range(1000):
    floats.append(rng.uniform(-1e6, 1e6))
for x in floats:
    print("float %016x %s" % (struct.unpack("<Q", struct.pack("<d", x))[0], repr(x)))
