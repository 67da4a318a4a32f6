//! Who the processes of a distributed bake are: a hostfile (one `host:port` per line, process
//! I on line I), or Slurm's environment (`srun`).

use crate::ClusterError;

/// The processes of one distributed bake, and which one this is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// This process's index: it listens on `addresses[index]`.
    pub index: usize,
    /// `host:port` of every process, in process order.
    pub addresses: Vec<String>,
}

impl Cluster {
    /// Process `index` of the hostfile's text: one `host:port` a line; blank lines and lines
    /// starting with `#` are skipped.
    pub fn from_hostfile(text: &str, index: usize) -> Result<Cluster, ClusterError> {
        let addresses: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        for a in &addresses {
            let port = a.rsplit_once(':').map(|(_, p)| p.parse::<u16>());
            if !matches!(port, Some(Ok(_))) {
                return Err(ClusterError::Config(format!(
                    "hostfile line {a:?} is not host:port"
                )));
            }
        }
        Cluster::new(index, addresses)
    }

    fn new(index: usize, addresses: Vec<String>) -> Result<Cluster, ClusterError> {
        if addresses.is_empty() {
            return Err(ClusterError::Config("the hostfile lists no process".into()));
        }
        if index >= addresses.len() {
            return Err(ClusterError::Config(format!(
                "process {index} asked for, but the hostfile lists {} (0 to {})",
                addresses.len(),
                addresses.len() - 1
            )));
        }
        Ok(Cluster { index, addresses })
    }

    /// Number of processes.
    pub fn processes(&self) -> usize {
        self.addresses.len()
    }

    /// From Slurm's environment (`SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_JOB_NODELIST`, and the
    /// tasks per node): task T listens on its node at `base_port` plus its rank on that node.
    /// Host names come from `scontrol show hostnames`, or from [`expand_hostlist`] where
    /// `scontrol` is missing. Tasks are taken as Slurm's default block distribution lays them
    /// out: the first node's tasks first.
    pub fn from_slurm(
        env: &dyn Fn(&str) -> Option<String>,
        base_port: u16,
    ) -> Result<Cluster, ClusterError> {
        let var = |name: &str| {
            env(name).ok_or_else(|| {
                ClusterError::Config(format!(
                    "--cluster slurm: {name} is not set (run under srun)"
                ))
            })
        };
        let number = |name: &str| -> Result<usize, ClusterError> {
            var(name)?
                .trim()
                .parse()
                .map_err(|_| ClusterError::Config(format!("{name} is not a number")))
        };
        let index = number("SLURM_PROCID")?;
        let tasks = number("SLURM_NTASKS")?;
        let list = env("SLURM_STEP_NODELIST").map_or_else(|| var("SLURM_JOB_NODELIST"), Ok)?;
        let hosts = scontrol_hostnames(&list).unwrap_or(expand_hostlist(&list)?);
        let per_node = match env("SLURM_STEP_TASKS_PER_NODE").or(env("SLURM_TASKS_PER_NODE")) {
            Some(text) => expand_counts(&text)?,
            None => vec![tasks.div_ceil(hosts.len().max(1)); hosts.len()],
        };
        let mut addresses = Vec::with_capacity(tasks);
        'nodes: for (host, &count) in hosts.iter().zip(&per_node) {
            for rank in 0..count {
                if addresses.len() == tasks {
                    break 'nodes;
                }
                let port = u32::from(base_port) + rank as u32;
                let port = u16::try_from(port)
                    .map_err(|_| ClusterError::Config(format!("port {port} is past 65535")))?;
                addresses.push(format!("{host}:{port}"));
            }
        }
        if addresses.len() != tasks {
            return Err(ClusterError::Config(format!(
                "Slurm's nodes ({list}) hold {} tasks, SLURM_NTASKS says {tasks}",
                addresses.len()
            )));
        }
        Cluster::new(index, addresses)
    }
}

/// `scontrol show hostnames LIST`, when scontrol is there and answers.
fn scontrol_hostnames(list: &str) -> Option<Vec<String>> {
    let out = std::process::Command::new("scontrol")
        .args(["show", "hostnames", list])
        .output()
        .ok()?;
    let hosts: Vec<String> = String::from_utf8(out.stdout)
        .ok()?
        .split_whitespace()
        .map(str::to_string)
        .collect();
    (out.status.success() && !hosts.is_empty()).then_some(hosts)
}

/// Expands a Slurm host list such as `node[01-03,07],login1` into its names (zero padding
/// kept). One bracket group per name.
pub fn expand_hostlist(list: &str) -> Result<Vec<String>, ClusterError> {
    let bad = || ClusterError::Config(format!("cannot read the Slurm host list {list:?}"));
    let mut hosts = Vec::new();
    for item in split_outside_brackets(list) {
        let Some((prefix, rest)) = item.split_once('[') else {
            if !item.is_empty() {
                hosts.push(item.to_string());
            }
            continue;
        };
        let (ranges, suffix) = rest.split_once(']').ok_or_else(bad)?;
        for range in ranges.split(',') {
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            let width = lo.len();
            let (a, b): (u64, u64) = (
                lo.parse().map_err(|_| bad())?,
                hi.parse().map_err(|_| bad())?,
            );
            if b < a {
                return Err(bad());
            }
            for n in a..=b {
                hosts.push(format!("{prefix}{n:0width$}{suffix}"));
            }
        }
    }
    if hosts.is_empty() {
        return Err(bad());
    }
    Ok(hosts)
}

/// Slurm's tasks per node, `2(x3),1` meaning 2, 2, 2, 1.
fn expand_counts(text: &str) -> Result<Vec<usize>, ClusterError> {
    let bad = || ClusterError::Config(format!("cannot read Slurm's tasks per node {text:?}"));
    let mut out = Vec::new();
    for item in text.split(',') {
        let (count, times) = match item.split_once("(x") {
            Some((c, t)) => (c, t.trim_end_matches(')')),
            None => (item, "1"),
        };
        let count: usize = count.trim().parse().map_err(|_| bad())?;
        let times: usize = times.trim().parse().map_err(|_| bad())?;
        out.extend(std::iter::repeat_n(count, times));
    }
    Ok(out)
}

fn split_outside_brackets(list: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in list.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(list[start..].trim());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn a_slurm_host_list_expands_with_its_padding() {
        assert_eq!(
            expand_hostlist("node[01-03,07],login1,gpu[9-10]-ib").unwrap(),
            ["node01", "node02", "node03", "node07", "login1", "gpu9-ib", "gpu10-ib"]
        );
        assert!(expand_hostlist("node[3-1]").is_err());
        assert!(expand_hostlist("node[1-2").is_err());
    }

    #[test]
    fn slurm_tasks_get_their_node_and_a_port_per_rank_on_it() {
        let vars: HashMap<&str, &str> = [
            ("SLURM_PROCID", "2"),
            ("SLURM_NTASKS", "3"),
            ("SLURM_JOB_NODELIST", "n[1-2]"),
            ("SLURM_TASKS_PER_NODE", "2,1"),
        ]
        .into();
        let env = |k: &str| vars.get(k).map(|v| v.to_string());
        let c = Cluster::from_slurm(&env, 7800).unwrap();
        assert_eq!(c.index, 2);
        assert_eq!(c.addresses, ["n1:7800", "n1:7801", "n2:7800"]);
        assert_eq!(expand_counts("2(x3),1").unwrap(), [2, 2, 2, 1]);
        let none = |_: &str| None;
        assert!(Cluster::from_slurm(&none, 7800).is_err());
    }

    #[test]
    fn a_hostfile_names_one_process_a_line() {
        let c = Cluster::from_hostfile("# farm\na:1\n\nb:2\n", 1).unwrap();
        assert_eq!(c.addresses, ["a:1", "b:2"]);
        assert!(Cluster::from_hostfile("a:1\n", 1).is_err());
        assert!(Cluster::from_hostfile("a\n", 0).is_err());
    }
}
