import Foundation

/// Turns the fields of raw records into values of an entity's properties: checks each key
/// against the entity and converts CSV text and JSON values to the attributes' types.
struct RecordConverter {
    /// What a key of the file sets.
    enum Target {
        case attribute(AttributeDescription)
        /// A to-one relationship, found by the value of `keyAttribute`, the destination's first
        /// string attribute.
        case toOne(RelationshipDescription, keyAttribute: AttributeDescription)

        var name: String {
            switch self {
            case .attribute(let attribute): attribute.name
            case .toOne(let relationship, _): relationship.name
            }
        }
    }

    let entity: EntityDescription
    let model: Model
    let file: URL
    private let targets: [String: Target]

    /// Checks a CSV header (`columns`) before anything is imported: every column must name an
    /// attribute or to-one relationship, and every property a record needs (required, with no
    /// default) must have a column.
    init(entity: EntityDescription, model: Model, file: URL, columns: [String]?) throws {
        self.entity = entity
        self.model = model
        self.file = file
        var targets: [String: Target] = [:]
        for attribute in entity.attributes { targets[attribute.name] = .attribute(attribute) }
        for relationship in entity.relationships where !relationship.isToMany {
            if let key = model.entity(named: relationship.destinationEntity)?.attributes.first(where: { $0.type == .string }) {
                targets[relationship.name] = .toOne(relationship, keyAttribute: key)
            }
        }
        self.targets = targets
        guard let columns, !columns.isEmpty else { return }
        for column in columns {
            if let problem = unknownKeyProblem(column) {
                throw ImportError(.badHeader, file: file, line: 1, field: column, "\(problem); nothing was imported")
            }
        }
        let needed = entity.attributes.filter { !$0.isOptional && $0.defaultValue.isNull }.map(\.name)
            + entity.relationships.filter { !$0.isToMany && !$0.isOptional }.map(\.name)
        if let missing = needed.first(where: { !columns.contains($0) }) {
            throw ImportError(.badHeader, file: file, line: 1, field: missing,
                              "the header has no column for \(missing), which every \(entity.name) needs (it is required and has no default); add the column; nothing was imported")
        }
    }

    /// The record's values, by what they set; throws a bad-record ``ImportError`` naming the
    /// field that is not a property or whose value does not fit.
    func convert(_ record: RawRecord) throws -> [(target: Target, value: Value)] {
        try record.fields.map { key, field in
            guard let target = targets[key] else {
                throw ImportError.badRecord(file, line: record.line, field: key, unknownKeyProblem(key) ?? "unknown key")
            }
            let type: AttributeType
            switch target {
            case .attribute(let attribute): type = attribute.type
            case .toOne(_, let keyAttribute): type = keyAttribute.type
            }
            guard let value = Self.value(of: field, as: type) else {
                var problem = "\(Self.display(field)) is not \(Self.expected(type, csv: field.isText))"
                if case .json(let json) = field, let outOfRange = Value.rangeProblem(of: json, as: type) { problem = outOfRange }
                if case .toOne(let relationship, let keyAttribute) = target {
                    problem += " (the \(keyAttribute.name) of a \(relationship.destinationEntity))"
                }
                throw ImportError.badRecord(file, line: record.line, field: key, problem)
            }
            return (target, value)
        }
    }

    /// Why `key` cannot be imported, or nil when it can.
    private func unknownKeyProblem(_ key: String) -> String? {
        if targets[key] != nil { return nil }
        let importable = entity.attributes.map(\.name) + entity.relationships.compactMap { relationship in
            guard case .toOne(_, let keyAttribute)? = targets[relationship.name] else { return nil }
            return "\(relationship.name) (the \(keyAttribute.name) of a \(relationship.destinationEntity))"
        }
        let properties = "; \(entity.name) takes \(importable.joined(separator: ", "))"
        guard let relationship = entity.relationship(named: key) else {
            return "\(entity.name) has no attribute or to-one relationship '\(key)'" + properties
        }
        if relationship.isToMany {
            let inverse = model.inverse(of: relationship)
            return "'\(key)' is a to-many relationship, which an import cannot set; import \(relationship.destinationEntity) with its '\(inverse.name)' column instead" + properties
        }
        return "\(relationship.destinationEntity) has no string attribute to find a \(relationship.destinationEntity) by, so '\(key)' cannot be imported" + properties
    }

    /// A field as a value of `type`; nil when it does not fit. JSON values read as seed files
    /// do (``Value/fromJSON(_:as:)``). CSV text: an empty field is null (`""`, quoted, is an
    /// empty string); numbers, bools and dates may have spaces around them; bools are
    /// true/false, yes/no or 1/0; dates ISO 8601 (`2024-05-01`, `2024-05-01T12:00:00Z`) or
    /// seconds since 1970; binary data base64.
    static func value(of field: RawRecord.Field, as type: AttributeType) -> Value? {
        let text: String
        switch field {
        case .json(let json):
            return Value.fromJSON(json, as: type)
        case .text(let value, let quoted):
            if value.isEmpty { return quoted && type == .string ? .string("") : .null }
            text = value
        }
        switch type {
        case .string:
            return .string(text)
        case .integer:
            let trimmed = trimmingSpaces(text)
            if let integer = Int64(trimmed) { return .integer(integer) }
            return Double(trimmed).flatMap { Int64(exactly: $0) }.map(Value.integer)
        case .double:
            return Double(trimmingSpaces(text)).map(Value.double)
        case .bool:
            switch trimmingSpaces(text).lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: return nil
            }
        case .date:
            let trimmed = trimmingSpaces(text)
            if let seconds = Double(trimmed) { return .date(Date(timeIntervalSince1970: seconds)) }
            return Value.fromJSON(String(trimmed), as: .date)
        case .binary:
            return Value.fromJSON(String(trimmingSpaces(text)), as: .binary)
        }
    }

    /// `text` without the spaces and tabs around it (Foundation's trimming took a tenth of an
    /// import's time).
    private static func trimmingSpaces(_ text: String) -> Substring {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        guard let start = text.firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = text.lastIndex(where: { !isSpace($0) })!
        return text[start...end]
    }

    /// A field as the message shows it: text in quotes, JSON as JSON.
    private static func display(_ field: RawRecord.Field) -> String {
        switch field {
        case .text(let text, _):
            return "'\(text)'"
        case .json(let json as String):
            return "'\(json)'"
        case .json(let json):
            return Value.jsonText(json)
        }
    }

    /// What a value of `type` is, with how to write one where that helps.
    private static func expected(_ type: AttributeType, csv: Bool) -> String {
        switch type {
        case .string: "text"
        case .integer: "an integer"
        case .double: "a number"
        case .bool: csv ? "a bool (write true/false, yes/no or 1/0)" : "true or false"
        case .date: "a date (write dates as 2024-05-01 or 2024-05-01T12:00:00Z)"
        case .binary: "binary data (write it as base64 text)"
        }
    }
}

extension RawRecord.Field {
    var isText: Bool {
        if case .text = self { return true }
        return false
    }
}
