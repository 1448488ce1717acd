import Foundation
import GRDB

extension Value {
    /// How the value is stored in SQLite: bools as 0/1, dates as seconds since 2001-01-01
    /// (REAL, Foundation's reference date, which round-trips a `Date` exactly), so that
    /// SQLite compares them as numbers, as the in-memory evaluator does.
    public var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .string(let v): return v.databaseValue
        case .integer(let v): return v.databaseValue
        case .double(let v): return v.databaseValue
        case .bool(let v): return (v ? 1 : 0 as Int64).databaseValue
        case .date(let v): return v.timeIntervalSinceReferenceDate.databaseValue
        case .binary(let v): return v.databaseValue
        }
    }

    /// Reads a stored value as an attribute of `type`. A value another SQLite client wrote
    /// with another storage class is converted where that is lossless, and read as
    /// ``null`` otherwise.
    public init(databaseValue: DatabaseValue, type: AttributeType) {
        switch (databaseValue.storage, type) {
        case (.null, _): self = .null
        case (.string(let v), .string): self = .string(v)
        case (.int64(let v), .integer): self = .integer(v)
        case (.int64(let v), .double): self = .double(Double(v))
        case (.double(let v), .double): self = .double(v)
        case (.double(let v), .integer): self = Int64(exactly: v).map(Value.integer) ?? .null
        case (.int64(let v), .bool): self = .bool(v != 0)
        case (.double(let v), .bool): self = .bool(v != 0)
        case (.double(let v), .date): self = .date(Date(timeIntervalSinceReferenceDate: v))
        case (.int64(let v), .date): self = .date(Date(timeIntervalSinceReferenceDate: Double(v)))
        case (.string(let v), .date): self = Value.parseDate(v).map(Value.date) ?? .null
        case (.blob(let v), .binary): self = .binary(v)
        case (.string(let v), .binary): self = .binary(Data(v.utf8))
        case (.string(let v), .integer): self = Int64(v).map(Value.integer) ?? .null
        case (.string(let v), .double): self = Double(v).map(Value.double) ?? .null
        default: self = .null
        }
    }
}

extension AttributeType {
    /// The column type the schema declares for this attribute type.
    var sqlType: String {
        switch self {
        case .string: return "TEXT"
        case .integer, .bool: return "INTEGER"
        case .double, .date: return "REAL"
        case .binary: return "BLOB"
        }
    }
}
