import Foundation

/// The benchmark's table: each figure beside its baseline and target, with PASS or MISS.
struct Report {
    struct Line {
        var figure: String
        var measured: String
        var baseline: String = ""
        var target: String = ""
        /// nil for an informational line.
        var passed: Bool?
    }

    private(set) var lines: [Line] = []

    mutating func add(_ line: Line) { lines.append(line) }

    var misses: [Line] { lines.filter { $0.passed == false } }

    func printed() -> String {
        let header = Line(figure: "figure", measured: "measured", baseline: "baseline", target: "target")
        let rows = [header] + lines
        func width(_ column: (Line) -> String) -> Int { rows.map { column($0).count }.max() ?? 0 }
        let widths = [width(\.figure), width(\.measured), width(\.baseline), width(\.target)]
        func format(_ line: Line, result: String) -> String {
            zip([line.figure, line.measured, line.baseline, line.target], widths)
                .map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: "  ") + "  " + result
        }
        var text = format(header, result: "result") + "\n"
        text += String(repeating: "-", count: widths.reduce(0, +) + 2 * widths.count + 6) + "\n"
        for line in lines {
            text += format(line, result: line.passed.map { $0 ? "PASS" : "MISS" } ?? "") + "\n"
        }
        return text
    }
}

/// `12.3 ms`, `456 µs`, `1.23 s`: three significant digits.
func duration(_ seconds: Double) -> String {
    if seconds >= 1 { return significant(seconds) + " s" }
    if seconds >= 1e-3 { return significant(seconds * 1e3) + " ms" }
    return significant(seconds * 1e6) + " µs"
}

func megabytes(_ bytes: Int) -> String { significant(Double(bytes) / 1_048_576) + " MB" }

func ratio(_ value: Double) -> String { significant(value) + "×" }

func significant(_ value: Double) -> String {
    let magnitude = abs(value)
    let decimals = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2
    return String(format: "%.\(decimals)f", value)
}
