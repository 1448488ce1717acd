import Foundation

/// The command line: `fetched-results-benchmark [--rows N] [--runs N] [--taps N] [--baseline-taps N] [--seed N] [--store PATH] [--import-rows N] [--commits N] [--idle-seconds N] [--share-rows N] [--firehose-seconds N] [--firehose-batch N] [--firehose-rate N] [--desktops N] [--desktops-seconds N] [--small-rows N] [--only controller|live|viewer1m|triggers|sharing|firehose|desktops|feed|small]`.
struct Options {
    /// Teams in the store.
    var rows = 1_000_000
    /// Timed runs of each fetch and of the bulk writes by SQL (the median is reported).
    var runs = 7
    /// Timed taps on the controller.
    var taps = 1_000
    /// Timed taps of the refetch-and-diff baseline (slow: each one refetches every ID).
    var baselineTaps = 20
    var seed: UInt64 = 2014
    /// A store file to reuse between runs (built when missing); a temporary one otherwise.
    var storePath: String?
    /// Rows imported into the open viewer window by the live-data part.
    var importRows = 100_000
    /// The parts to run: `controller` (the million-row store), `live` (the viewer window
    /// while an import and another connection change its store), `triggers` (only the
    /// history triggers' cost to bulk writes, which `controller` measures too), `viewer1m` (the
    /// viewer window on a million teams: opening, search, sort, Page Down, scrolling, an import;
    /// on a copy of `--store`, else of /tmp/bench1m.sqlite, built when missing).
    /// `sharing`: two desktops through PostgreSQL (`$FETCHED_RESULTS_POSTGRES_URL`), and a
    /// store of `shareRows` teams shared with an empty database and joined.
    /// `firehose`: four writer desktops (processes) saving as fast as they can, followed by a
    /// fifth (this process, its controller in a GLib main loop); about a minute.
    /// `desktops`: `desktops` desktops saving a change a second each for `desktopsSeconds`,
    /// beside one desktop watched by another; twice `desktopsSeconds` and more, so only on
    /// request (`--only desktops`).
    /// `feed`: another process's commit to `watch`'s batch, at 1,000 teams and on the
    /// million-team store (`--store`, else /tmp/bench1m.sqlite), and an idle `watch`.
    /// `small`: `smallRows` teams inserted and deleted through a shared store followed by
    /// another, beside stores and a database that never held them.
    var parts: Set<String> = ["controller", "live", "viewer1m", "sharing", "firehose", "feed", "small"]
    /// Commits timed per writer by the feed part.
    var commits = 200
    /// Teams of the store the sharing part shares with an empty database, and joins.
    var shareRows = 1_000_000
    /// Teams inserted and deleted again by the `small` part.
    var smallRows = 1_000_000
    /// Seconds an idle `watch` is watched by the feed part.
    var idleSeconds = 60
    /// Seconds the firehose's writers save.
    var firehoseSeconds = 20
    /// Teams changed by each save of a firehose writer.
    var firehoseBatch = 250
    /// Changes a second each firehose writer aims at; 0 for as many as it can. By default
    /// 2,600: the four writers save 10,400 changes a second, a little above the 10,000 the
    /// follower must keep up with, so that both the rate and the delay are measured at a
    /// load the target names. Writers saving as fast as they can fill both cores with their
    /// own saves and queue changes without end: a delay measured so grows with the run.
    var firehoseRate = 2_600
    /// Desktop processes of the desktops part.
    var desktops = 20
    /// Seconds the desktops part's desktops save, a change a second each (and its baseline's).
    var desktopsSeconds = 300

    static let usage = "usage: fetched-results-benchmark [--rows N] [--runs N] [--taps N] [--baseline-taps N] [--seed N] [--store PATH] [--import-rows N] [--commits N] [--idle-seconds N] [--share-rows N] [--firehose-seconds N] [--firehose-batch N] [--firehose-rate N] [--desktops N] [--desktops-seconds N] [--small-rows N] [--only controller|live|viewer1m|triggers|sharing|firehose|desktops|feed|small]"

    init(arguments: [String]) throws {
        var rest = arguments[...]
        func number(_ flag: String, orZero: Bool = false) throws -> Int {
            guard let text = rest.popFirst(), let value = Int(text.replacingOccurrences(of: "_", with: "")), value > 0 || (orZero && value == 0) else {
                throw OptionsError("\(flag) takes a \(orZero ? "number, 0 or more" : "positive number")\n\(Self.usage)")
            }
            return value
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--rows": rows = try number(flag)
            case "--runs": runs = try number(flag)
            case "--taps": taps = try number(flag)
            case "--baseline-taps": baselineTaps = try number(flag)
            case "--seed": seed = UInt64(try number(flag))
            case "--store":
                guard let path = rest.popFirst() else { throw OptionsError("--store takes a file path\n\(Self.usage)") }
                storePath = path
            case "--import-rows": importRows = try number(flag)
            case "--commits": commits = try number(flag)
            case "--idle-seconds": idleSeconds = try number(flag)
            case "--share-rows": shareRows = try number(flag)
            case "--firehose-seconds": firehoseSeconds = try number(flag)
            case "--firehose-batch": firehoseBatch = try number(flag)
            case "--firehose-rate": firehoseRate = try number(flag, orZero: true)
            case "--desktops":
                desktops = try number(flag)
                guard desktops >= 2 else { throw OptionsError("--desktops takes 2 or more\n\(Self.usage)") }
            case "--desktops-seconds": desktopsSeconds = try number(flag)
            case "--small-rows": smallRows = try number(flag)
            case "--only":
                guard let part = rest.popFirst(), ["controller", "live", "viewer1m", "triggers", "sharing", "firehose", "desktops", "feed", "small"].contains(part) else {
                    throw OptionsError("--only takes controller, live, viewer1m, triggers, sharing, firehose, desktops, feed or small\n\(Self.usage)")
                }
                parts = [part]
            case "-h", "--help": throw OptionsError(Self.usage)
            default: throw OptionsError("unknown option \(flag)\n\(Self.usage)")
            }
        }
    }
}

struct OptionsError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
