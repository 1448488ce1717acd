/// The kind of file an ``ObjectImporter`` reads.
public enum ImportFormat: Sendable, Hashable {
    /// Comma-separated values (RFC 4180) with a header row naming the entity's properties.
    case csv
    /// JSON lines: one JSON object per line, its keys naming the entity's properties.
    case jsonLines

    /// The format a file extension stands for: `csv` for comma-separated values; `jsonl`,
    /// `ndjson` and `json` for JSON lines (compared ignoring case); nil for any other.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "csv": self = .csv
        case "jsonl", "ndjson", "json": self = .jsonLines
        default: return nil
        }
    }
}
