import Foundation

extension Model {
    /// Loads and validates a JSON model file (format: `Docs/ModelFormat.md`).
    ///
    /// Errors name the file and the place in it: `model.json: entities[1] (Team).attributes[0]
    /// (wins).type: ...`.
    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ModelError(url.path, "cannot read the model file: \(error.localizedDescription)")
        }
        try self.init(json: data, source: url.lastPathComponent)
    }

    /// Decodes and validates a JSON model; `source` names the document in error messages.
    public init(json data: Data, source: String = "model.json") throws {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ModelError(source, "not valid JSON (\(error.localizedDescription)); check the file with a JSON validator")
        }
        let reader = JSONModelReader(source: source)
        let entities = try reader.entities(from: root)
        do {
            try self.init(entities: entities)
        } catch let error as ModelError {
            throw ModelError("\(source): \(error.location)", error.reason)
        }
    }

    /// The model as canonical JSON (sorted keys, no Swift classes or validators): what
    /// ``init(json:source:)`` reads back, and what the store records.
    public func jsonData() -> Data {
        let object: [String: Any] = ["entities": entities.map(Self.jsonObject(for:))]
        // Only JSON-compatible values go in, so this cannot fail.
        return try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    /// A short hash of ``jsonData()``: equal models have equal fingerprints.
    public var fingerprint: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a, 64 bits
        for byte in jsonData() {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    private static func jsonObject(for entity: EntityDescription) -> [String: Any] {
        var object = jsonProperties(of: entity)
        switch entity.ownership {
        case .owner(let owner, let shared)?: object["ownership"] = shared.map { ["owner": owner, "shared": $0] } ?? ["owner": owner]
        case .inherited(let relationship)?: object["ownership"] = ["through": relationship]
        case nil: break
        }
        return object
    }

    private static func jsonProperties(of entity: EntityDescription) -> [String: Any] {
        [
            "name": entity.name,
            "attributes": entity.attributes.map { attribute -> [String: Any] in
                var object: [String: Any] = [
                    "name": attribute.name, "type": attribute.type.rawValue, "optional": attribute.isOptional,
                ]
                if !attribute.defaultValue.isNull { object["default"] = attribute.defaultValue.jsonObject }
                if let v = attribute.minLength { object["minLength"] = v }
                if let v = attribute.maxLength { object["maxLength"] = v }
                if let v = attribute.minValue { object["minValue"] = v.jsonObject }
                if let v = attribute.maxValue { object["maxValue"] = v.jsonObject }
                if attribute.merge != .replace { object["merge"] = attribute.merge.rawValue }
                return object
            },
            "relationships": entity.relationships.map { relationship -> [String: Any] in
                [
                    "name": relationship.name, "destination": relationship.destinationEntity,
                    "inverse": relationship.inverseName, "toMany": relationship.isToMany,
                    "deleteRule": relationship.deleteRule.rawValue, "optional": relationship.isOptional,
                ]
            },
            "indexes": entity.indexes.map { index -> [String: Any] in
                var object: [String: Any] = [
                    "properties": index.elements.map { ($0.ascending ? "" : "-") + $0.property },
                ]
                if let name = index.name { object["name"] = name }
                return object
            },
        ]
    }

}

extension Value {
    /// The value as `JSONSerialization` writes it: dates as ISO 8601 text, binary data as
    /// base64, nil as `NSNull` — what model and seed files read back.
    public var jsonObject: Any {
        switch self {
        case .null: return NSNull()
        case .string(let v): return v
        case .integer(let v): return v
        case .double(let v): return v
        case .bool(let v): return v
        case .date(let v): return ISO8601DateFormatter.withFractionalSeconds.string(from: v)
        case .binary(let v): return v.base64EncodedString()
        }
    }
}

extension ISO8601DateFormatter {
    /// `2024-05-01T12:00:00.000Z`; reads text with or without fractional seconds.
    nonisolated(unsafe) static let withFractionalSeconds: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
    nonisolated(unsafe) static let plain = ISO8601DateFormatter()
}

extension Value {
    /// Reads a JSON value (from `JSONSerialization`) as a value of `type`; nil when it does
    /// not fit. Dates are ISO 8601 text (`2024-05-01`, `2024-05-01T12:00:00Z`) or seconds
    /// since 1970; binary data is base64 text.
    public static func fromJSON(_ json: Any, as type: AttributeType) -> Value? {
        if json is NSNull { return .null }
        switch type {
        case .string:
            return (json as? String).map(Value.string)
        case .bool:
            if let number = json as? NSNumber, isJSONBoolean(number) { return .bool(number.boolValue) }
            return nil
        case .integer:
            guard let number = json as? NSNumber, !isJSONBoolean(number) else { return nil }
            switch String(cString: number.objCType) {
            case "d", "f":
                // Past ±2^63 a double is no Int64, whatever `exactly` makes of the edge.
                guard Swift.abs(number.doubleValue) < 9_223_372_036_854_775_808.0 else { return nil }
                return Int64(exactly: number.doubleValue).map(Value.integer)
            case "Q":
                return Int64(exactly: number.uint64Value).map(Value.integer)   // past Int64.max: refused, not wrapped
            default:
                return .integer(number.int64Value)
            }
        case .double:
            guard let number = json as? NSNumber, !isJSONBoolean(number) else { return nil }
            return .double(number.doubleValue)
        case .date:
            if let number = json as? NSNumber, !isJSONBoolean(number) {
                guard dateSecondsRange.contains(number.doubleValue) else { return nil }
                return .date(Date(timeIntervalSince1970: number.doubleValue))
            }
            guard let text = json as? String else { return nil }
            return parseDate(text).map(Value.date)
        case .binary:
            return (json as? String).flatMap { Data(base64Encoded: $0) }.map(Value.binary)
        }
    }

    /// The dates a value may hold, as seconds since 1970: the years 1 to 9999.
    public static let dateSecondsRange: ClosedRange<Double> = -62_135_596_800 ... 253_402_300_799

    /// Why `json`, a number, is no value of `type` because it is out of range, with the
    /// range; nil when that is not why (see ``fromJSON(_:as:)``).
    public static func rangeProblem(of json: Any, as type: AttributeType) -> String? {
        guard let number = json as? NSNumber, !isJSONBoolean(number), fromJSON(json, as: type) == nil else { return nil }
        switch type {
        case .integer where number.doubleValue.rounded() == number.doubleValue:
            return "\(number.stringValue) is outside the integer range (\(Int64.min) to \(Int64.max))"
        case .date:
            return "\(number.stringValue) seconds since 1970 is outside the date range (the years 1 to 9999: \(Int64(dateSecondsRange.lowerBound)) to \(Int64(dateSecondsRange.upperBound)) seconds)"
        default:
            return nil
        }
    }

    /// A JSON value as JSON writes it (`"3"`, `true`, `12`), to show in a message.
    public static func jsonText(_ json: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [json], options: [.fragmentsAllowed, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }

    /// Parses `2024-05-01`, `2024-05-01T12:00:00Z` or `2024-05-01T12:00:00.250Z` (UTC).
    static func parseDate(_ text: String) -> Date? {
        if let date = ISO8601DateFormatter.withFractionalSeconds.date(from: text)
            ?? ISO8601DateFormatter.plain.date(from: text) { return date }
        if text.count == 10 { return ISO8601DateFormatter.plain.date(from: text + "T00:00:00Z") }
        return nil
    }
}

/// Whether an NSNumber came from a JSON `true`/`false` (Foundation marks those with type "c").
private func isJSONBoolean(_ number: NSNumber) -> Bool {
    String(cString: number.objCType) == "c"
}

/// Turns the `JSONSerialization` tree of a model file into entity descriptions, with error
/// messages that point at the exact place.
private struct JSONModelReader {
    let source: String

    func fail(_ path: String, _ reason: String) -> ModelError {
        ModelError("\(source): \(path)", reason)
    }

    func object(_ any: Any, at path: String) throws -> [String: Any] {
        guard let object = any as? [String: Any] else { throw fail(path, "expected a JSON object") }
        return object
    }

    func array(_ any: Any?, at path: String) throws -> [Any] {
        guard let any else { return [] }
        guard let array = any as? [Any] else { throw fail(path, "expected a JSON array") }
        return array
    }

    func string(_ object: [String: Any], _ key: String, at path: String) throws -> String {
        guard let value = object[key] else { throw fail(path, "missing \"\(key)\"") }
        guard let string = value as? String else { throw fail("\(path).\(key)", "expected a string") }
        return string
    }

    func bool(_ object: [String: Any], _ key: String, default defaultValue: Bool, at path: String) throws -> Bool {
        guard let value = object[key] else { return defaultValue }
        guard let number = value as? NSNumber, isJSONBoolean(number) else {
            throw fail("\(path).\(key)", "expected true or false")
        }
        return number.boolValue
    }

    func int(_ object: [String: Any], _ key: String, at path: String) throws -> Int? {
        guard let value = object[key] else { return nil }
        guard let int = value as? Int, int >= 0 else { throw fail("\(path).\(key)", "expected a whole number ≥ 0") }
        return int
    }

    func checkKeys(_ object: [String: Any], _ known: Set<String>, at path: String) throws {
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw fail(path, "unknown key \"\(unknown)\"; expected one of \(known.sorted().joined(separator: ", "))")
        }
    }

    func entities(from root: Any) throws -> [EntityDescription] {
        let rootObject = try object(root, at: "top level")
        try checkKeys(rootObject, ["entities"], at: "top level")
        guard rootObject["entities"] != nil else { throw fail("top level", "missing \"entities\"") }
        return try array(rootObject["entities"], at: "entities").enumerated().map { index, any in
            try entity(from: any, at: "entities[\(index)]")
        }
    }

    func entity(from any: Any, at basePath: String) throws -> EntityDescription {
        let json = try object(any, at: basePath)
        let name = try string(json, "name", at: basePath)
        let path = "\(basePath) (\(name))"
        try checkKeys(json, ["name", "attributes", "relationships", "indexes", "ownership"], at: path)
        let attributes = try array(json["attributes"], at: "\(path).attributes").enumerated().map { i, any in
            try attribute(from: any, at: "\(path).attributes[\(i)]")
        }
        let relationships = try array(json["relationships"], at: "\(path).relationships").enumerated().map { i, any in
            try relationship(from: any, at: "\(path).relationships[\(i)]")
        }
        let indexes = try array(json["indexes"], at: "\(path).indexes").enumerated().map { i, any in
            try index(from: any, at: "\(path).indexes[\(i)]")
        }
        return EntityDescription(name: name, attributes: attributes, relationships: relationships, indexes: indexes,
                                 ownership: try json["ownership"].map { try ownership(from: $0, at: "\(path).ownership") })
    }

    /// `{ "owner": "attribute", "shared": "attribute" }` or `{ "through": "relationship" }`.
    func ownership(from any: Any, at path: String) throws -> Ownership {
        let json = try object(any, at: path)
        try checkKeys(json, ["owner", "shared", "through"], at: path)
        if json["through"] != nil {
            guard json["owner"] == nil, json["shared"] == nil else { throw fail(path, "give either \"through\" or \"owner\" (with \"shared\"), not both") }
            return .inherited(through: try string(json, "through", at: path))
        }
        guard json["owner"] != nil else { throw fail(path, "missing \"owner\" (the attribute naming each object's owner) or \"through\" (a relationship to the owned object)") }
        return .owner(attribute: try string(json, "owner", at: path), sharedAttribute: try json["shared"].map { _ in try string(json, "shared", at: path) })
    }

    func attribute(from any: Any, at basePath: String) throws -> AttributeDescription {
        let json = try object(any, at: basePath)
        let name = try string(json, "name", at: basePath)
        let path = "\(basePath) (\(name))"
        try checkKeys(json, ["name", "type", "optional", "default", "minLength", "maxLength", "minValue", "maxValue", "merge"], at: path)
        let typeName = try string(json, "type", at: path)
        guard let type = AttributeType(rawValue: typeName) else {
            throw fail("\(path).type", "unknown type \"\(typeName)\"; use one of \(AttributeType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        func value(_ key: String) throws -> Value? {
            guard let raw = json[key] else { return nil }
            guard let value = Value.fromJSON(raw, as: type) else {
                throw fail("\(path).\(key)", "\(raw) is not \(type == .integer ? "an" : "a") \(type) value\(type == .date ? " (write dates as \"2024-05-01\" or \"2024-05-01T12:00:00Z\")" : type == .binary ? " (write binary data as base64 text)" : "")")
            }
            return value
        }
        return AttributeDescription(
            name: name, type: type,
            isOptional: try bool(json, "optional", default: false, at: path),
            defaultValue: try value("default") ?? .null,
            minLength: try int(json, "minLength", at: path), maxLength: try int(json, "maxLength", at: path),
            minValue: try value("minValue"), maxValue: try value("maxValue"),
            merge: try merge(json, at: path))
    }

    private func merge(_ json: [String: Any], at path: String) throws -> AttributeMerge {
        guard json["merge"] != nil else { return .replace }
        let name = try string(json, "merge", at: path)
        guard let merge = AttributeMerge(rawValue: name) else {
            throw fail("\(path).merge", "unknown merge \"\(name)\"; use \"add\" for a counter, or leave it out (\"replace\")")
        }
        return merge
    }

    func relationship(from any: Any, at basePath: String) throws -> RelationshipDescription {
        let json = try object(any, at: basePath)
        let name = try string(json, "name", at: basePath)
        let path = "\(basePath) (\(name))"
        try checkKeys(json, ["name", "destination", "inverse", "toMany", "deleteRule", "optional"], at: path)
        var rule = DeleteRule.nullify
        if json["deleteRule"] != nil {
            let ruleName = try string(json, "deleteRule", at: path)
            guard let parsed = DeleteRule(rawValue: ruleName) else {
                throw fail("\(path).deleteRule", "unknown delete rule \"\(ruleName)\"; use nullify, cascade or deny")
            }
            rule = parsed
        }
        return RelationshipDescription(
            name: name,
            destinationEntity: try string(json, "destination", at: path),
            inverseName: try string(json, "inverse", at: path),
            isToMany: try bool(json, "toMany", default: false, at: path),
            deleteRule: rule,
            isOptional: try bool(json, "optional", default: true, at: path))
    }

    func index(from any: Any, at path: String) throws -> IndexDescription {
        if let properties = any as? [String] { return IndexDescription(properties: properties) }
        let json = try object(any, at: path)
        try checkKeys(json, ["name", "properties"], at: path)
        guard let properties = json["properties"] as? [String] else {
            throw fail("\(path).properties", "expected an array of property names (\"-name\" for descending)")
        }
        return IndexDescription(name: json["name"] as? String, properties: properties)
    }
}
