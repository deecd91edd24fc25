//! Which process holds a TCP port, so a failed bind can say who is in the way (Linux only:
//! read from `/proc`; elsewhere nobody is named and the error asks instead).

/// `pid 1234 (wraith serve shop --port 8081)` for the process listening on `port`, when the
/// system lets us see it.
pub(crate) fn describe(port: u16) -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        linux::describe(port)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = port;
        None
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeSet;

    /// TCP state `LISTEN` in `/proc/net/tcp*`.
    const LISTEN: &str = "0A";

    pub(super) fn describe(port: u16) -> Option<String> {
        let mut inodes = BTreeSet::new();
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            if let Ok(text) = std::fs::read_to_string(table) {
                inodes.extend(listening_inodes(&text, port));
            }
        }
        if inodes.is_empty() {
            return None;
        }
        let wanted: BTreeSet<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
        // Every process holding the socket, with its parent: a process forking a child holds
        // its sockets in the child too until the child's exec closes them.
        let mut holders: Vec<(u32, u32, std::path::PathBuf)> = Vec::new();
        for proc_entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let name = proc_entry.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            // Processes of other users cannot be read: skip them quietly.
            let Ok(fds) = std::fs::read_dir(proc_entry.path().join("fd")) else {
                continue;
            };
            let holds = fds.flatten().any(|fd| {
                std::fs::read_link(fd.path())
                    .ok()
                    .and_then(|target| target.to_str().map(|t| wanted.contains(t)))
                    .unwrap_or(false)
            });
            if holds && let Ok(pid) = pid.parse::<u32>() {
                let status =
                    std::fs::read_to_string(proc_entry.path().join("status")).unwrap_or_default();
                holders.push((pid, parent_pid(&status).unwrap_or(0), proc_entry.path()));
            }
        }
        let pairs: Vec<(u32, u32)> = holders.iter().map(|(p, pp, _)| (*p, *pp)).collect();
        let pid = original_holder(&pairs)?;
        let (_, _, path) = holders.iter().find(|(p, _, _)| *p == pid)?;
        let cmdline = std::fs::read(path.join("cmdline")).unwrap_or_default();
        Some(format_holder(&pid.to_string(), &cmdline))
    }

    /// `PPid` of a `/proc/<pid>/status` text.
    pub(super) fn parent_pid(status: &str) -> Option<u32> {
        status
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))
            .and_then(|v| v.trim().parse().ok())
    }

    /// Of the (pid, parent pid) pairs holding a socket, the lowest pid whose parent does not
    /// hold it too: the process that opened it, not a child it forked and has yet to exec.
    pub(super) fn original_holder(holders: &[(u32, u32)]) -> Option<u32> {
        let held = |pid: u32| holders.iter().any(|(p, _)| *p == pid);
        holders
            .iter()
            .filter(|(_, parent)| !held(*parent))
            .map(|(p, _)| *p)
            .min()
            .or_else(|| holders.iter().map(|(p, _)| *p).min())
    }

    /// Socket inodes listening on `port` in one `/proc/net/tcp*` table.
    pub(super) fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
        let want = format!("{port:04X}");
        table
            .lines()
            .skip(1)
            .filter_map(|line| {
                let cols: Vec<&str> = line.split_whitespace().collect();
                let local_port = cols.get(1)?.rsplit_once(':')?.1;
                (local_port.eq_ignore_ascii_case(&want) && *cols.get(3)? == LISTEN)
                    .then(|| cols.get(9)?.parse().ok())
                    .flatten()
            })
            .collect()
    }

    /// `pid N (argv joined by spaces)`, or `pid N` when the command line is unreadable.
    pub(super) fn format_holder(pid: &str, cmdline: &[u8]) -> String {
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if args.is_empty() {
            return format!("pid {pid}");
        }
        // One line, and short: an inline script as an argument would flood the message.
        let line: String = args
            .join(" ")
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let mut short: String = line.chars().take(MAX_COMMAND_CHARS).collect();
        if line.chars().count() > MAX_COMMAND_CHARS {
            short.push('…');
        }
        format!("pid {pid} ({short})")
    }

    /// Longest command line quoted in the message.
    const MAX_COMMAND_CHARS: usize = 120;

    #[cfg(test)]
    mod tests {
        use super::*;

        const TABLE: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41234 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F91 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 55555 1 0000000000000000 20 4 30 10 -1
   2: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 100 0 0 10 0
";

        #[test]
        fn only_listening_sockets_on_the_port_are_found() {
            // 0x1F91 = 8081: the listener, not the established connection on the same port.
            assert_eq!(listening_inodes(TABLE, 8081), vec![41234]);
            assert_eq!(listening_inodes(TABLE, 80), vec![777]);
            assert!(listening_inodes(TABLE, 9999).is_empty());
        }

        #[test]
        fn a_child_forked_with_the_socket_is_not_taken_for_its_holder() {
            // 2615 is 2607's child, forked and not yet exec'd: 2607 opened the socket.
            assert_eq!(original_holder(&[(2615, 2607), (2607, 1)]), Some(2607));
            assert_eq!(original_holder(&[(40, 1), (30, 1)]), Some(30));
            assert_eq!(original_holder(&[]), None);
            assert_eq!(
                parent_pid("Name:\tcli\nPid:\t2615\nPPid:\t2607\n"),
                Some(2607)
            );
        }

        #[test]
        fn the_holder_is_named_by_pid_and_command_line() {
            assert_eq!(
                format_holder("42", b"wraith\0serve\0shop\0"),
                "pid 42 (wraith serve shop)"
            );
            assert_eq!(format_holder("42", b""), "pid 42");
            let long = format!("python3\0-c\0{}\nprint(1)\0", "x".repeat(300));
            let named = format_holder("7", long.as_bytes());
            assert!(!named.contains('\n'), "{named}");
            assert!(named.ends_with("…)"), "{named}");
            assert!(named.chars().count() < 140, "{named}");
        }
    }
}
