"""The sandbox of pycore-coredump@.service, seen from inside: run by the
machine of check-hook-vm.py as the unit's ExecStartPost= (a drop-in its
init adds), so with every setting of the unit, as root as ExecStart= starts.
It tries to create a file in each directory named below, and to open
sockets of families the unit does not allow, and prints one journal line,
"PYCORE-PROBE INSTANCE {json}": per directory "ok" or the errno's name,
and its own /proc/self/status lines of interest.  It leaves a file in its
/tmp (PrivateTmp=: the machine's /tmp must not show it)."""
import errno
import json
import os
import socket
import sys

instance = sys.argv[1] if len(sys.argv) > 1 else "?"
# outside the unit's ReadWritePaths=, StateDirectory=, RuntimeDirectory=,
# CacheDirectory= (and the home directories: ProtectHome=read-only);
# then inside them, and the private /tmp and /var/tmp
TRY = ["/etc", "/usr/lib", "/var/lib", "/var/log", "/boot", "/root", "/pycore-test", "/var/lib/systemd",
       "/var/lib/systemd/coredump", "/var/lib/pycore", "/run/pycore", "/var/cache/pycore", "/tmp", "/var/tmp"]
writes = {}
for d in TRY:
    path = os.path.join(d, "pycore-probe-%s" % instance)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        writes[d] = "ok"
        if d != "/tmp":
            os.unlink(path)
    except OSError as e:
        writes[d] = errno.errorcode.get(e.errno, str(e.errno))
families = {}
for name in ("AF_UNIX", "AF_INET", "AF_NETLINK", "AF_PACKET"):
    try:
        socket.socket(getattr(socket, name), socket.SOCK_DGRAM if name != "AF_PACKET" else socket.SOCK_RAW).close()
        families[name] = "ok"
    except OSError as e:
        families[name] = errno.errorcode.get(e.errno, str(e.errno))
status = {}
for line in open("/proc/self/status"):
    key, _, value = line.partition(":")
    if key in ("Uid", "NoNewPrivs", "Seccomp", "CapBnd", "CapEff"):
        status[key] = value.split()
print("PYCORE-PROBE %s %s" % (instance, json.dumps({
    "writes": writes, "families": families, "status": status,
    "devices": sorted(os.listdir("/dev")), "interfaces": sorted(os.listdir("/sys/class/net"))})), flush=True)
