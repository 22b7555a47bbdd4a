// What a Prometheus monitor keeps without `keep=`: a few dozen series that say whether a host or a
// server process is out of CPU, memory or accept queue.

extension SeriesSelector {
    /// The default `keep=` list, as written in docs/MONITORING.md: node_exporter's host CPU by mode
    /// (summed over cores), load, available memory, TCP listen-queue overflows and drops, connection
    /// counts and retransmits; the standard `process_*` series any Prometheus client exports; and
    /// Prosody's c2s connection gauge. Series a scrape does not have are simply absent.
    public static let defaultList =
        "sum by (mode) (node_cpu_seconds_total),node_load1,node_memory_MemAvailable_bytes,node_memory_MemTotal_bytes,"
        + "node_netstat_TcpExt_ListenOverflows,node_netstat_TcpExt_ListenDrops,node_netstat_Tcp_CurrEstab,"
        + "node_netstat_Tcp_PassiveOpens,node_netstat_Tcp_RetransSegs,node_sockstat_TCP_inuse,"
        + "process_cpu_seconds_total,process_resident_memory_bytes,process_open_fds,"
        + "prosody_mod_c2s__connections"

    /// `defaultList`, parsed (a test checks that it parses).
    public static let defaults: [SeriesSelector] = (try? parseList(defaultList)) ?? []
}
