extension ObjectContext {
    /// Checks every pending change; throws one ``ValidationError`` listing every failure.
    func validateForSave() throws {
        var failures: [ValidationError.Failure] = []
        // A stable order for the failures: by entity, then as rows sort.
        for object in changedObjects.sorted(by: { ($0.objectID.entityName, $0.objectID) < ($1.objectID.entityName, $1.objectID) }) {
            if object.isDeleted {
                if !object.isInserted { failures += try denyFailures(of: object) }
            } else {
                failures += try validationFailures(of: object)
            }
        }
        if !failures.isEmpty { throw ValidationError(failures: failures) }
    }

    private func denyFailures(of object: ManagedObject) throws -> [ValidationError.Failure] {
        var failures: [ValidationError.Failure] = []
        for relationship in object.entity.relationships where relationship.deleteRule == .deny {
            let remaining = try relatedObjects(of: object, relationship: relationship).filter { !$0.isDeleted }
            if !remaining.isEmpty {
                failures.append(.init(objectID: object.objectID, key: relationship.name, message: "cannot be deleted while it has \(remaining.count) related \(relationship.destinationEntity) object\(remaining.count == 1 ? "" : "s"); delete or reassign them first"))
            }
        }
        return failures
    }

    /// The checks of one inserted or updated object.
    func validationFailures(of object: ManagedObject) throws -> [ValidationError.Failure] {
        var failures: [ValidationError.Failure] = []
        func fail(_ key: String?, _ message: String) {
            failures.append(.init(objectID: object.objectID, key: key, message: message))
        }
        // A counter's change is checked once it is added to the saved value, in the save's
        // transaction (`counterFailures`): the value shown here may be behind.
        for attribute in object.entity.attributes where counterDelta(of: object, key: attribute.name) == nil {
            for message in attribute.validationFailures(of: try attributeValue(of: object, key: attribute.name)) {
                fail(attribute.name, message)
            }
        }
        for relationship in object.entity.relationships where !relationship.isToMany && !relationship.isOptional {
            if try relatedObjects(of: object, relationship: relationship).isEmpty {
                fail(relationship.name, "is required; set a \(relationship.destinationEntity)")
            }
        }
        if let validator = object.entity.validator {
            do {
                try validator(object)
            } catch let error as ValidationError {
                for failure in error.failures { fail(failure.key, failure.message) }
            } catch {
                fail(nil, "\(error)")
            }
        }
        return failures
    }
}

extension AttributeDescription {
    /// What is wrong with `value` as this attribute's, by the model's rules (required,
    /// `minLength`/`maxLength`, `minValue`/`maxValue`, what SQLite cannot keep), each as the
    /// rest of a sentence that starts with the attribute's name: "must not be empty". Empty
    /// when the value fits. The one definition of these rules: a save checks them, and so
    /// does sharing for every row it takes from a server.
    package func validationFailures(of value: Value) -> [String] {
        if value.isNull { return isOptional ? [] : ["is required; give it a value"] }
        var failures: [String] = []
        let length: Int? = switch value {
        case .string(let s): s.count
        case .binary(let d): d.count
        default: nil
        }
        switch value {
        case .string(let s) where s.unicodeScalars.contains("\u{0}"):
            failures.append("contains a NUL character, which SQLite cannot keep in text; remove it")
        case .double(let d) where d.isNaN:
            failures.append("is not a number (NaN), which SQLite cannot store; give a number")
        default: break
        }
        let unit = type == .string ? "characters" : "bytes"
        if let length, let min = minLength, length < min {
            failures.append(min == 1 && type == .string ? "must not be empty" : "needs at least \(min) \(unit) (has \(length))")
        }
        if let length, let max = maxLength, length > max {
            failures.append("allows at most \(max) \(unit) (has \(length))")
        }
        if let min = minValue, DatabaseValueOrdering.compare(value.databaseValue, min.databaseValue, options: []) == .orderedAscending {
            failures.append("must be at least \(min) (is \(value))")
        }
        if let max = maxValue, DatabaseValueOrdering.compare(value.databaseValue, max.databaseValue, options: []) == .orderedDescending {
            failures.append("must be at most \(max) (is \(value))")
        }
        return failures
    }
}
