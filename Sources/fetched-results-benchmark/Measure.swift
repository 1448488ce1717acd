import Foundation

/// Wall-clock timing and the process's memory, as the benchmark reports them.
enum Measure {
    /// Seconds `body` takes.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return (ContinuousClock.now - start).seconds
    }

    /// The `fraction` quantile of `samples` (0.5 for the median), nearest rank.
    static func quantile(_ samples: [Double], _ fraction: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    static func median(_ samples: [Double]) -> Double { quantile(samples, 0.5) }

    /// A monotonic clock in seconds, comparable across threads of this process.
    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1_000_000_000 }

    /// Resident set size now, in bytes (`/proc/self/statm`).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The peak resident set size since the last ``resetPeakResident()``, in bytes (`VmHWM`).
    static func peakResidentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else { return 0 }
        return kilobytes * 1024
    }

    /// Starts the peak (`VmHWM`) over from the current resident set size.
    static func resetPeakResident() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}

extension Duration {
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
