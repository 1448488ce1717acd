import GRDB

// MARK: Counters

/// A counter (an attribute whose ``AttributeDescription/merge`` is ``AttributeMerge/add``)
/// is saved as what the edit added, not as the value it shows: the delta between its unsaved
/// value and the saved value the change started from (`changeBases`). The save writes
/// `wins = wins + delta`, never a conflict, so that two contexts or processes tapping one team
/// both count; the object then shows the sum the store holds. Its `minValue`/`maxValue` are
/// checked against that sum, in the save's transaction.
extension ObjectContext {
    /// What the unsaved change of the counter `key` adds, or nil when `key` is no counter
    /// with an unsaved change of a saved object (an inserted object writes its value).
    func counterDelta(of object: ManagedObject, key: String) -> Value? {
        guard !object.isInserted, object.entity.attribute(named: key)?.isCounter == true,
              case .attribute(let edited)? = object.changes[key], case .attribute(let base)? = object.changeBases[key] else { return nil }
        return edited.subtracting(base)
    }

    /// The counters' values after the save adds their deltas to `stored` (each updated
    /// object's row, read in the save's transaction before the write), checked against the
    /// model's `minValue`/`maxValue`: a tap that would take `wins` below 0 because another
    /// process took some away meanwhile is refused with the attribute's name.
    func counterFailures(of objects: Set<ManagedObject>, stored: [ManagedObject: [String: StoredValue]]) -> [ValidationError.Failure] {
        var failures: [ValidationError.Failure] = []
        for object in objects.sorted(by: { $0.objectID < $1.objectID }) {
            guard let row = stored[object] else { continue }
            for key in object.changes.keys.sorted() {
                guard let sum = counterSum(of: object, key: key, stored: row), let attribute = object.entity.attribute(named: key),
                      case .attribute(let shown)? = object.changes[key], case .attribute(let saved)? = row[key] else { continue }
                // Said as a save of any attribute says it, and where another writer moved the
                // saved value, with how.
                let elsewhere = sum == shown ? "" : " once added to the \(saved) saved elsewhere meanwhile"
                for message in attribute.validationFailures(of: sum) {
                    failures.append(.init(objectID: object.objectID, key: key, message: message + elsewhere))
                }
            }
        }
        return failures
    }

    /// The value of the counter `key` once its delta is added to the stored `row`; nil when
    /// `key` is no counter with an unsaved change.
    func counterSum(of object: ManagedObject, key: String, stored row: [String: StoredValue]) -> Value? {
        guard let delta = counterDelta(of: object, key: key), case .attribute(let saved)? = row[key] else { return nil }
        return saved.adding(delta)
    }
}

extension ManagedObject {
    /// What the unsaved change of the counter `key` adds to the saved value it started
    /// from: what its save will add. Nil when `key` is no counter with an unsaved change of
    /// a saved object.
    package func unsavedCounterChange(forKey key: String) -> Value? {
        managedObjectContext?.counterDelta(of: self, key: key)
    }
}

extension Value {
    /// `self + other` for two numbers, NULL counting as 0 (as the save's `coalesce(wins, 0) + ?`
    /// does), by the project's one definition of arithmetic (``PredicateArithmetic``): past
    /// 64 bits an integer sum becomes a double, as SQLite makes it.
    package func adding(_ other: Value) -> Value { combined(.add, other) }

    /// `self - other` for two numbers, NULL counting as 0.
    package func subtracting(_ other: Value) -> Value { combined(.subtract, other) }

    private func combined(_ operation: FetchPredicate.ArithmeticOperator, _ other: Value) -> Value {
        let zero = Int64(0).databaseValue
        let result = PredicateArithmetic.apply(operation, isNull ? zero : databaseValue, other.isNull ? zero : other.databaseValue)
        switch result.storage {
        case .int64(let value): return .integer(value)
        case .double(let value): return .double(value)
        default: return .null
        }
    }
}
