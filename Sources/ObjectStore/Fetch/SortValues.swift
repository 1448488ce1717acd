import Foundation
import GRDB

/// An object's or a row's values of the keys of an order, read once, in the order of its
/// sort descriptors and in the form they compare in (stored, strings folded by the
/// descriptor's options): sorting or searching many objects compares each many times, and
/// reading a value through the object costs a context look-up and the key path's parse.
/// Compare them with `[FetchSortDescriptor].compare(_:_:)` of the same descriptors.
package struct SortValues: Sendable {
    private let values: [DatabaseValue]

    /// `object`'s values of `sortDescriptors`' keys (attributes of the object itself).
    package init(of object: any KeyValueReading, sortedBy sortDescriptors: [FetchSortDescriptor]) {
        values = sortDescriptors.map { Self.comparable(DatabaseValueOrdering.stored(object.attributeValue(forKey: $0.key)), $0) }
    }

    /// A row whose columns after the primary key are the keys of `sortDescriptors`, of
    /// attribute types `types`: compared without an object made for it.
    init(row: Row, types: [AttributeType?], sortedBy sortDescriptors: [FetchSortDescriptor]) {
        values = sortDescriptors.indices.map { i in
            let value: DatabaseValue = row[i + 1]
            let stored = types[i].map { DatabaseValueOrdering.stored(Value(databaseValue: value, type: $0)) } ?? value
            return Self.comparable(stored, sortDescriptors[i])
        }
    }

    fileprivate static func compare(_ a: SortValues, _ b: SortValues, _ sortDescriptors: [FetchSortDescriptor]) -> ComparisonResult {
        for (i, descriptor) in sortDescriptors.enumerated() {
            let result = DatabaseValueOrdering.compare(a.values[i], b.values[i], options: [])
            if result != .orderedSame { return descriptor.ascending ? result : ComparisonResult(rawValue: -result.rawValue)! }
        }
        return .orderedSame
    }

    /// Strings folded once, so that comparing them is comparing their bytes.
    private static func comparable(_ value: DatabaseValue, _ descriptor: FetchSortDescriptor) -> DatabaseValue {
        guard !descriptor.options.isEmpty, case .string(let string) = value.storage else { return value }
        return StringComparison.fold(string, options: descriptor.options).databaseValue
    }
}

extension Array where Element == FetchSortDescriptor {
    /// The order of two objects' ``SortValues`` of these descriptors, as
    /// `compare(_:_:)` orders the objects.
    package func compare(_ a: SortValues, _ b: SortValues) -> ComparisonResult {
        SortValues.compare(a, b, self)
    }
}
