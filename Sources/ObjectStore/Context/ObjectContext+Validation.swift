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
        for attribute in object.entity.attributes {
            let value = try attributeValue(of: object, key: attribute.name)
            if value.isNull {
                if !attribute.isOptional { fail(attribute.name, "is required; give it a value") }
                continue
            }
            let length: Int? = switch value {
            case .string(let s): s.count
            case .binary(let d): d.count
            default: nil
            }
            switch value {
            case .string(let s) where s.unicodeScalars.contains("\u{0}"):
                fail(attribute.name, "contains a NUL character, which SQLite cannot keep in text; remove it")
            case .double(let d) where d.isNaN:
                fail(attribute.name, "is not a number (NaN), which SQLite cannot store; give a number")
            default: break
            }
            let unit = attribute.type == .string ? "characters" : "bytes"
            if let length, let min = attribute.minLength, length < min {
                fail(attribute.name, min == 1 && attribute.type == .string ? "must not be empty" : "needs at least \(min) \(unit) (has \(length))")
            }
            if let length, let max = attribute.maxLength, length > max {
                fail(attribute.name, "allows at most \(max) \(unit) (has \(length))")
            }
            if let min = attribute.minValue, DatabaseValueOrdering.compare(value.databaseValue, min.databaseValue, options: []) == .orderedAscending {
                fail(attribute.name, "must be at least \(min) (is \(value))")
            }
            if let max = attribute.maxValue, DatabaseValueOrdering.compare(value.databaseValue, max.databaseValue, options: []) == .orderedDescending {
                fail(attribute.name, "must be at most \(max) (is \(value))")
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
