import Foundation
import ObjectStore

/// How a dataset is shown: the contents of its `view.json` (format: `Docs/Datasets.md`).
package struct ViewConfiguration: Sendable, Decodable {
    package struct SortKey: Sendable, Decodable {
        package var key: String
        package var ascending: Bool?
        var descriptor: FetchSortDescriptor { FetchSortDescriptor(key: key, ascending: ascending ?? true) }
    }

    package struct Request: Sendable, Decodable {
        package var entity: String
        package var predicate: String?
        package var sortDescriptors: [SortKey]
        package var sectionKeyPath: String?
        package var batchSize: Int?
        package var cacheName: String?
    }

    package struct SectionRequest: Sendable, Decodable {
        package var entity: String
        package var sortDescriptors: [SortKey]
        package var itemsKey: String
        package var titleKey: String
    }

    package struct Row: Sendable, Decodable {
        package var title: String
        package var subtitle: String?
        package var image: String?
    }

    package struct SortOption: Sendable, Decodable {
        package var title: String
        package var sortDescriptors: [SortKey]
    }

    package enum Widget: String, Sendable, Decodable {
        /// A text entry.
        case entry
        /// A number typed as text: shown exactly as stored, never clamped; a typed value
        /// outside `min`…`max` or the model's range is refused with a message.
        case number
        case `switch`, date

        package init(from decoder: any Decoder) throws {
            let name = try decoder.singleValueContainer().decode(String.self)
            // "spin", this widget's name before it became an entry that never clamps, still reads.
            guard let widget = name == "spin" ? .number : Widget(rawValue: name) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                    debugDescription: "unknown widget \"\(name)\"; expected entry, number, switch or date"))
            }
            self = widget
        }
    }

    package struct Field: Sendable, Decodable {
        package var key: String
        package var label: String?
        package var widget: Widget?
        /// A `number` field's range for typed values (besides the model's `minValue`/`maxValue`).
        package var min: Double?
        package var max: Double?
    }

    package var title: String?
    package var fetchRequest: Request
    package var sectionRequest: SectionRequest?
    package var sectionTitles: [String: String]?
    package var row: Row
    /// What people read for a key path of the listed entity (`"teamName": "Team name"`,
    /// `"list": "List"`), wherever it is shown: dialogs, the detail pane, screen readers.
    package var labels: [String: String]?
    package var counter: String?
    /// What the counter button does, as people read it: `"Add a win"`.
    package var counterLabel: String?
    package var toggle: String?
    package var searchKeys: [String]?
    package var sortOptions: [SortOption]?
    package var addFields: [Field]?
    package var editFields: [Field]?

    /// The keys each object of the file may have, for the unknown-key check.
    static let knownKeys: [String: Set<String>] = [
        "": ["title", "fetchRequest", "sectionRequest", "sectionTitles", "row", "labels", "counter", "counterLabel", "toggle", "searchKeys", "sortOptions", "addFields", "editFields"],
        "fetchRequest": ["entity", "predicate", "sortDescriptors", "sectionKeyPath", "batchSize", "cacheName"],
        "sectionRequest": ["entity", "sortDescriptors", "itemsKey", "titleKey"],
        "row": ["title", "subtitle", "image"],
        "sortDescriptors": ["key", "ascending"],
        "sortOptions": ["title", "sortDescriptors"],
        "addFields": ["key", "label", "widget", "min", "max"],
        "editFields": ["key", "label", "widget", "min", "max"],
    ]

    /// Reads a view file; errors name the file and the key.
    package static func load(from url: URL) throws -> ViewConfiguration {
        let file = url.lastPathComponent
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw DatasetError("\(url.path): cannot read the view file: \(error.localizedDescription)") }
        guard let json = try? JSONSerialization.jsonObject(with: data) else {
            throw DatasetError("\(file): not valid JSON; check the file with a JSON validator")
        }
        try checkKeys(json, path: "", parent: "", file: file)
        do {
            return try JSONDecoder().decode(ViewConfiguration.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw DatasetError("\(file): \(pathText(context.codingPath)): missing \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(type, context), let DecodingError.valueNotFound(type, context) {
            throw DatasetError("\(file): \(pathText(context.codingPath)): expected \(type == String.self ? "text" : "\(type)")")
        } catch let DecodingError.dataCorrupted(context) {
            throw DatasetError("\(file): \(pathText(context.codingPath)): \(context.debugDescription)")
        }
    }

    private static func pathText(_ path: [any CodingKey]) -> String {
        path.isEmpty ? "top level" : path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: ["."])
    }

    private static func checkKeys(_ json: Any, path: String, parent: String, file: String) throws {
        if let object = json as? [String: Any] {
            if let known = knownKeys[parent] {
                for key in object.keys.sorted() where !known.contains(key) {
                    throw DatasetError("\(file): \(path.isEmpty ? "top level" : path): unknown key \"\(key)\"; expected one of \(known.sorted().joined(separator: ", "))")
                }
            }
            // The keys of these two are names of the file's own choosing.
            for (key, value) in object where parent != "sectionTitles" && parent != "labels" {
                try checkKeys(value, path: path.isEmpty ? key : "\(path).\(key)", parent: key, file: file)
            }
        } else if let array = json as? [Any] {
            for (i, value) in array.enumerated() { try checkKeys(value, path: "\(path)[\(i)]", parent: parent, file: file) }
        }
    }

    // MARK: Using it

    /// The fetch request of the list: the file's, with another sort option and a search text.
    package func makeFetchRequest(sortOption: Int = 0, search: String = "") throws -> FetchRequest<ManagedObject> {
        var request = FetchRequest<ManagedObject>(entityName: fetchRequest.entity)
        var predicates: [FetchPredicate] = []
        if let format = fetchRequest.predicate { predicates.append(try FetchPredicate(format: format)) }
        let text = search.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, let keys = searchKeys, !keys.isEmpty {
            predicates.append(.or(try keys.map { try FetchPredicate(format: "%K CONTAINS[cd] %@", $0, text) }))
        }
        request.predicate = predicates.isEmpty ? nil : .and(predicates)
        let options = sortOptions ?? []
        let sorts = options.indices.contains(sortOption) && sortOption > 0 ? options[sortOption].sortDescriptors : fetchRequest.sortDescriptors
        request.sortDescriptors = sorts.map(\.descriptor)
        request.fetchBatchSize = fetchRequest.batchSize ?? 0
        return request
    }

    /// The section fetch request, for sections from their own entity.
    package func makeSectionFetchRequest() -> FetchRequest<ManagedObject>? {
        sectionRequest.map { FetchRequest(entityName: $0.entity, sortDescriptors: $0.sortDescriptors.map(\.descriptor)) }
    }

    /// The header text of a section.
    package func sectionTitle(forSectionName name: String) -> String {
        sectionTitles?[name] ?? name
    }

    /// What people read for a key path of the listed entity (`teamName`, `list`,
    /// `list.title`): its text in `labels`, else a dialog field's `label`, else its last key
    /// in words. The one source of every label the viewer shows or gives screen readers.
    package func label(forKeyPath keyPath: String) -> String {
        labels?[keyPath]
            ?? ((addFields ?? []) + (editFields ?? [])).first { $0.key == keyPath && $0.label != nil }?.label
            ?? Self.words(keyPath.split(separator: ".").last.map(String.init) ?? keyPath)
    }

    /// What the counter button does, as people read it: `counterLabel`, else "Add 1 to"
    /// the counter's label; nil without a counter.
    package var counterAction: String? {
        counter.map { counterLabel ?? "Add 1 to \(label(forKeyPath: $0).lowercased())" }
    }

    /// A key or entity name in words: "qualifyingZone" → "Qualifying zone".
    package static func words(_ name: String) -> String {
        var words: [String] = []
        for character in name {
            if character.isUppercase || words.isEmpty { words.append("") }
            words[words.count - 1].append(character)
        }
        let text = words.joined(separator: " ").lowercased()
        return text.prefix(1).uppercased() + text.dropFirst()
    }

    /// A row template filled in from `object`: `{keyPath}` replaced by its value; text
    /// without `{` is one key path.
    package static func render(_ template: String, for object: any KeyValueReading) -> String {
        guard template.contains("{") else { return text(of: object, keyPath: template) }
        var result = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            result += text(of: object, keyPath: String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// A key path's value as text for a row: nil empty, bools Yes/No, dates as `YYYY-MM-DD`.
    package static func text(of object: any KeyValueReading, keyPath: String) -> String {
        var current: any KeyValueReading = object
        let parts = keyPath.split(separator: ".").map(String.init)
        for part in parts.dropLast() {
            guard let next = current.relatedObjects(forKey: part).first else { return "" }
            current = next
        }
        switch current.attributeValue(forKey: parts.last ?? "") {
        case .null: return ""
        case .string(let s): return s
        case .integer(let v): return String(v)
        case .double(let v): return v.rounded() == v && abs(v) < 1e15 ? String(Int64(v)) : String(v)
        case .bool(let v): return v ? "Yes" : "No"
        case .date(let d): return Date.dayString(d)
        case .binary(let d): return "\(d.count) bytes"
        }
    }

}

extension ViewConfiguration {
    /// Whether `keyPath` names an attribute or a relationship of `entity`, through to-one relationships.
    static func isPropertyPath(_ keyPath: String, of entity: EntityDescription, in model: Model) -> Bool {
        var current = entity
        let parts = keyPath.split(separator: ".").map(String.init)
        for part in parts.dropLast() {
            guard let relationship = current.relationship(named: part), !relationship.isToMany,
                  let next = model.entity(named: relationship.destinationEntity) else { return false }
            current = next
        }
        guard let last = parts.last else { return false }
        return current.attribute(named: last) != nil || current.relationship(named: last) != nil
    }
}

/// A dataset that cannot be loaded: the file, the place in it, and what to do.
package struct DatasetError: Error, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

extension ViewConfiguration {
    /// Checks the view against its model: entities, key paths, sort orders, the counter,
    /// toggle and dialog fields. Errors name the file and key.
    package func validate(against model: Model, file: String = "view.json") throws {
        func fail(_ place: String, _ message: String) -> DatasetError { DatasetError("\(file): \(place): \(message)") }
        let entity: EntityDescription
        do { entity = try model.existingEntity(named: fetchRequest.entity) } catch { throw fail("fetchRequest.entity", "\(error)") }
        func checkKeyPath(_ keyPath: String, _ place: String, type: AttributeType? = nil) throws {
            do {
                try FetchSortDescriptor(key: keyPath).validate(for: entity, in: model)
            } catch {
                throw fail(place, "\(error)")
            }
            if let type, !keyPath.contains("."), entity.attribute(named: keyPath)?.type != type {
                throw fail(place, "'\(keyPath)' must be \(type == .integer ? "an" : "a") \(type) attribute of \(entity.name)")
            }
        }
        func checkSorts(_ sorts: [SortKey], _ place: String) throws {
            guard !sorts.isEmpty else { throw fail(place, "needs at least one sort descriptor; a fetched results controller needs an order") }
            for (i, sort) in sorts.enumerated() { try checkKeyPath(sort.key, "\(place)[\(i)].key") }
            if sectionRequest == nil, let section = fetchRequest.sectionKeyPath, sorts.first?.key != section {
                throw fail(place, "must start with the section key path '\(section)' so that each section's rows are together")
            }
        }
        try checkSorts(fetchRequest.sortDescriptors, "fetchRequest.sortDescriptors")
        if let section = fetchRequest.sectionKeyPath { try checkKeyPath(section, "fetchRequest.sectionKeyPath") }
        if let format = fetchRequest.predicate {
            do { try FetchPredicate(format: format).validate(for: entity, in: model) } catch { throw fail("fetchRequest.predicate", "\(error)") }
        }
        for (i, option) in (sortOptions ?? []).enumerated() { try checkSorts(option.sortDescriptors, "sortOptions[\(i)].sortDescriptors") }
        if let counter { try checkKeyPath(counter, "counter", type: .integer) }
        if let toggle { try checkKeyPath(toggle, "toggle", type: .bool) }
        for (i, key) in (searchKeys ?? []).enumerated() { try checkKeyPath(key, "searchKeys[\(i)]", type: .string) }
        if let image = row.image { try checkKeyPath(image, "row.image", type: .string) }
        for (label, template) in [("row.title", row.title), ("row.subtitle", row.subtitle)] {
            guard let template else { continue }
            let keys = template.contains("{")
                ? template.split(separator: "{").dropFirst().compactMap { $0.split(separator: "}", omittingEmptySubsequences: false).first.map(String.init) }
                : [template]
            for key in keys { try checkKeyPath(key, label) }
        }
        if let sections = sectionRequest { try validate(sections, itemEntity: entity, model: model, fail: fail) }
        for keyPath in (labels ?? [:]).keys.sorted() where !Self.isPropertyPath(keyPath, of: entity, in: model) {
            throw fail("labels", "'\(keyPath)' is not an attribute or relationship (or a key path to one) of \(entity.name)")
        }
        try validateFields(of: entity, fail: fail)
    }

    /// Checks a section request: its entity, the to-many relationship to the rows, the title
    /// attribute, the sort keys.
    private func validate(_ sections: SectionRequest, itemEntity entity: EntityDescription, model: Model,
                          fail: (String, String) -> DatasetError) throws {
        let sectionEntity: EntityDescription
        do { sectionEntity = try model.existingEntity(named: sections.entity) } catch { throw fail("sectionRequest.entity", "\(error)") }
        guard let items = sectionEntity.relationship(named: sections.itemsKey), items.isToMany, items.destinationEntity == entity.name else {
            throw fail("sectionRequest.itemsKey", "\(sections.entity) needs a to-many relationship '\(sections.itemsKey)' to \(entity.name)")
        }
        guard sectionEntity.attribute(named: sections.titleKey) != nil else {
            throw fail("sectionRequest.titleKey", "\(sections.entity) has no attribute '\(sections.titleKey)'")
        }
        for (i, sort) in sections.sortDescriptors.enumerated() {
            do { try sort.descriptor.validate(for: sectionEntity, in: model) } catch { throw fail("sectionRequest.sortDescriptors[\(i)].key", "\(error)") }
        }
    }

    /// Checks the Add and Edit dialogs' fields: attributes of the entity, one label a key,
    /// a widget that can edit the attribute's type.
    private func validateFields(of entity: EntityDescription, fail: (String, String) -> DatasetError) throws {
        for (name, fields) in [("addFields", addFields ?? []), ("editFields", editFields ?? [])] {
            for (i, field) in fields.enumerated() {
                guard let attribute = entity.attribute(named: field.key) else {
                    throw fail("\(name)[\(i)].key", "\(entity.name) has no attribute '\(field.key)'")
                }
                if let text = field.label, text != label(forKeyPath: field.key) {
                    throw fail("\(name)[\(i)].label", "\"\(text)\" is not \"\(label(forKeyPath: field.key))\", the label '\(field.key)' has elsewhere in the file; a key has one label everywhere (give it once, in \"labels\")")
                }
                let fits: [Widget: [AttributeType]] = [.entry: [.string], .number: [.integer, .double], .switch: [.bool], .date: [.date]]
                if let widget = field.widget, fits[widget]?.contains(attribute.type) != true {
                    throw fail("\(name)[\(i)].widget", "a \(widget.rawValue) cannot edit the \(attribute.type) attribute '\(field.key)'")
                }
            }
        }
    }
}
