import Foundation

/// One key of the order of a fetch: a key path, a direction, and how strings compare. Core
/// Data's `NSSortDescriptor`, for fetch requests (not `SortDescriptor`, which Foundation has).
///
/// The store sorts in SQL with ``sqlOrderingTerm(for:in:alias:)`` and the object graph in
/// memory with ``compare(_:_:)``; both give SQLite's order for every value: nil first when
/// ascending (last when descending), then numbers, strings (by UTF-8 bytes, or folded with
/// ``options``), then binary data. Sort by several descriptors with
/// `[FetchSortDescriptor].compare(_:_:)`.
///
/// ```swift
/// FetchSortDescriptor(key: "wins", ascending: false)
/// FetchSortDescriptor(key: "details.closeDate")                    // across a to-one relationship
/// FetchSortDescriptor(key: "name", options: [.caseInsensitive])
/// ```
///
/// ## Topics
/// - ``init(key:ascending:options:)``
/// - ``validate(for:in:)``
/// - ``sqlOrderingTerm(for:in:alias:)``
/// - ``compare(_:_:)``
public struct FetchSortDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The key path to sort by: an attribute, possibly across to-one relationships
    /// (`details.closeDate`), or the size of a to-many relationship (`items.@count`).
    public var key: String
    public var ascending: Bool
    /// How strings compare; empty for byte order.
    public var options: StringComparisonOptions

    public init(key: String, ascending: Bool = true, options: StringComparisonOptions = []) {
        self.key = key
        self.ascending = ascending
        self.options = options
    }

    public var description: String {
        "\(key)\(options.formatSuffix) \(ascending ? "ascending" : "descending")"
    }

    private var components: [String] {
        key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// Checks the key path against the entity: it must lead to one attribute value per
    /// object (or `@count`), and options need a string attribute.
    public func validate(for entity: EntityDescription, in model: Model) throws {
        _ = try resolve(for: entity, in: model)
    }

    private func resolve(for entity: EntityDescription, in model: Model) throws -> ResolvedKeyPath {
        do {
            let path = try ResolvedKeyPath.resolve(components, from: entity, in: model)
            try path.checkScalar()
            guard let type = path.valueType else {
                throw FetchPredicateError(.keyPath, "'\(key)' is a relationship; sort by one of its attributes, as in \(key).name")
            }
            if !options.isEmpty && type != .string {
                throw FetchPredicateError(.typeMismatch, "the options \(options.formatSuffix) compare strings, and '\(key)' is \(type == .integer ? "an" : "a") \(type); remove the options")
            }
            return path
        } catch let error as FetchPredicateError {
            throw FetchPredicateError(error.kind, "sort descriptor \(self): \(error.message)")
        }
    }

    /// The `ORDER BY` term for rows of `FROM "Entity" alias`, with the collation of
    /// ``SQLFunctions`` for the options. Key paths across relationships become correlated
    /// subqueries with aliases made from `alias`. Add a unique key as the last term for a
    /// total order: ``compare(_:_:)`` treats ties as equal.
    public func sqlOrderingTerm(for entity: EntityDescription, in model: Model, alias: String) throws -> String {
        let path = try resolve(for: entity, in: model)
        var compiler = PredicateSQLCompiler(model: model, alias: alias)
        let collation = SQLFunctions.collationName(for: options).map { " COLLATE \($0)" } ?? ""
        return compiler.scalar(path, alias: alias) + collation + (ascending ? " ASC" : " DESC")
    }

    /// The order of two objects by this key, in memory, as SQLite orders their rows.
    public func compare(_ a: any KeyValueReading, _ b: any KeyValueReading) -> ComparisonResult {
        let components = self.components
        let result = DatabaseValueOrdering.compare(
            KeyPathReader.value(components, of: a), KeyPathReader.value(components, of: b), options: options)
        guard !ascending else { return result }
        return ComparisonResult(rawValue: -result.rawValue)!
    }
}

extension Sequence where Element == FetchSortDescriptor {
    /// The order of two objects by these descriptors: the first one that tells them apart
    /// decides; `.orderedSame` when none does.
    public func compare(_ a: any KeyValueReading, _ b: any KeyValueReading) -> ComparisonResult {
        for descriptor in self {
            let result = descriptor.compare(a, b)
            if result != .orderedSame { return result }
        }
        return .orderedSame
    }
}
