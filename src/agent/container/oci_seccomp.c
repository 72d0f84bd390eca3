/* oci_seccomp.c - the default seccomp profile of Tessera's containers.
 *
 * Default allow, with a deny list: every system call that only an
 * administrator of the host needs, or that has been a repeated source of
 * kernel exploits, fails with EPERM.  Most of them need capabilities the
 * containers do not have anyway (see the capability list in oci_spec.c);
 * the filter is the second wall.  A deny list rather than Docker's allow
 * list: research images run compilers, debuggers, MPI and CUDA, and a
 * system call newer than the profile should not break them; the price is
 * that a new dangerous call is allowed until it is added here.
 * Why each is denied, and what is allowed on purpose (ptrace, for gdb and
 * strace inside; NUMA calls; process_vm_*), is in docs/design/containers.md. */
#include "common/compat.h"

#include "agent/container/oci_spec.h"

#define CLONE_NEWUSER_FLAG 0x10000000ULL
#define PER_READ_IMPLIES_EXEC 0x0400000ULL
#define PER_MMAP_PAGE_ZERO 0x0100000ULL
#define AF_VSOCK_FAMILY 40 /* <sys/socket.h>'s AF_VSOCK, the same on every architecture */

/* EPERM, whatever the arguments. */
static const char *const denied[] = {
        /* kernel modules */
        "init_module", "finit_module", "delete_module", "create_module", "get_kernel_syms", "query_module",
        /* rebooting or replacing the kernel */
        "reboot", "kexec_load", "kexec_file_load",
        /* the kernel keyring is not namespaced */
        "add_key", "request_key", "keyctl",
        /* mounts and the root: the old and the new mount API */
        "mount", "umount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
        "open_tree", "mount_setattr",
        /* swap, clocks, accounting, quotas: host-wide */
        "swapon", "swapoff", "clock_settime", "clock_adjtime", "settimeofday", "stime", "acct", "quotactl",
        "quotactl_fd",
        /* file handles bypass the mount namespace (the "shocker" escape) */
        "open_by_handle_at", "name_to_handle_at",
        /* large kernel attack surface, or host-wide information */
        "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
        "lookup_dcookie", "syslog", "fanotify_init", "vhangup",
        /* joining other namespaces */
        "setns",
        /* obsolete or raw hardware access */
        "uselib", "vm86", "vm86old", "nfsservctl", "sysfs", "_sysctl", "ustat", "iopl", "ioperm",
};

static json_t *masked_rule(const char *name, unsigned long long mask, int errno_ret)
{
        return json_pack("{s:[s], s:s, s:i, s:[{s:i, s:I, s:I, s:s}]}", "names", name, "action", "SCMP_ACT_ERRNO",
                         "errnoRet", errno_ret, "args", "index", 0, "value", (json_int_t)mask, "valueTwo",
                         (json_int_t)mask, "op", "SCMP_CMP_MASKED_EQ");
}

json_t *oci_seccomp_profile(void)
{
        json_t *names = json_array(), *rules = json_array(), *arches;

        for (size_t i = 0; i < ARRAY_SIZE(denied); i++)
                json_array_append_new(names, json_string(denied[i]));
        json_array_append_new(rules,
                              json_pack("{s:o, s:s, s:i}", "names", names, "action", "SCMP_ACT_ERRNO", "errnoRet", EPERM));
        /* user namespaces are the one kind an unprivileged process may make,
         * and they hand it every capability inside: no CLONE_NEWUSER */
        json_array_append_new(rules, masked_rule("unshare", CLONE_NEWUSER_FLAG, EPERM));
        json_array_append_new(rules, masked_rule("clone", CLONE_NEWUSER_FLAG, EPERM));
        /* clone3 passes its flags in memory a filter cannot read: ENOSYS makes
         * the C library fall back to clone (as Docker does) */
        json_array_append_new(rules, json_pack("{s:[s], s:s, s:i}", "names", "clone3", "action", "SCMP_ACT_ERRNO",
                                               "errnoRet", ENOSYS));
        /* AF_VSOCK talks to the hypervisor and to the host's vsock services
         * (a VM's agent, its metadata), which no session has business
         * with: the family does not exist here, as on a host without it.
         * socketcall (32-bit x86) passes the family in memory, out of the
         * filter's sight: it goes, and 32-bit programs use socket(2) as
         * the C library has since Linux 4.3. */
        json_array_append_new(rules, json_pack("{s:[s], s:s, s:i, s:[{s:i, s:I, s:s}]}", "names", "socket", "action",
                                               "SCMP_ACT_ERRNO", "errnoRet", EAFNOSUPPORT, "args", "index", 0,
                                               "value", (json_int_t)AF_VSOCK_FAMILY, "op", "SCMP_CMP_EQ"));
        json_array_append_new(rules, json_pack("{s:[s], s:s, s:i}", "names", "socketcall", "action", "SCMP_ACT_ERRNO",
                                               "errnoRet", ENOSYS));
        /* personality: no executable data, no page at address zero */
        json_array_append_new(rules, masked_rule("personality", PER_READ_IMPLIES_EXEC, EPERM));
        json_array_append_new(rules, masked_rule("personality", PER_MMAP_PAGE_ZERO, EPERM));

#if defined(__x86_64__) || defined(__i386__)
        arches = json_pack("[s, s, s]", "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32");
#elif defined(__aarch64__)
        arches = json_pack("[s, s]", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM");
#else
        arches = json_array(); /* the native architecture only */
#endif
        return json_pack("{s:s, s:o, s:o}", "defaultAction", "SCMP_ACT_ALLOW", "architectures", arches, "syscalls",
                         rules);
}
