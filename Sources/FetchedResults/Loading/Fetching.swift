import Foundation
import ObjectStore

extension FetchedResultsController {

    func validate(_ request: FetchRequest<Result>) throws {
        let context = managedObjectContext
        let entity = try context.model.existingEntity(named: request.entityName)
        if sectionFetchRequest == nil && request.sortDescriptors.isEmpty {
            throw FetchedResultsError(message: "the fetch request for \(entity.name) has no sort descriptors; a controller needs a defined order: add at least one, e.g. FetchSortDescriptor(key: \"\(entity.attributes.first?.name ?? "name")\")")
        }
        if let keyPath = sectionNameKeyPath {
            try context.validateKeyPath(keyPath, for: entity)
            guard let first = request.sortDescriptors.first, first.key == keyPath else {
                throw FetchedResultsError(message: "the first sort descriptor must sort by the section key path '\(keyPath)' so that each section's objects are together; put FetchSortDescriptor(key: \"\(keyPath)\") first")
            }
            guard first.options.isEmpty else {
                throw FetchedResultsError(message: "the sort descriptor of the section key path '\(keyPath)' has options \(first.options); sections group equal values, so sort that key without case or diacritic options")
            }
        }
        if let sectionRequest = sectionFetchRequest, let keyPath = sectionRelationshipKeyPath, let nameKey = sectionNameKey {
            let sectionEntity = try context.model.existingEntity(named: sectionRequest.entityName)
            guard let relationship = entity.relationship(named: keyPath), !relationship.isToMany,
                  relationship.destinationEntity == sectionEntity.name else {
                throw FetchedResultsError(message: "'\(keyPath)' must be a to-one relationship of \(entity.name) to \(sectionEntity.name), the section entity")
            }
            guard sectionEntity.attribute(named: nameKey) != nil else {
                throw FetchedResultsError(message: "the section entity \(sectionEntity.name) has no attribute '\(nameKey)' to name sections")
            }
        }
        // Checked here, without a query: a fetch from the cache does not check them again.
        let objectClass = entity.objectClass ?? ManagedObject.self
        guard objectClass is Result.Type else {
            throw FetchedResultsError(message: "\(entity.name) objects are \(objectClass), not \(Result.self); use FetchedResultsController<\(objectClass)> or <ManagedObject>")
        }
        try request.predicate?.validate(for: entity, in: context.model)
        for descriptor in request.sortDescriptors { try descriptor.validate(for: entity, in: context.model) }
    }

    func fetchLayout(for request: FetchRequest<Result>, useCache: Bool) throws -> [Section] {
        if let sectionRequest = sectionFetchRequest {
            return try fetchSectionEntityLayout(request, sectionRequest: sectionRequest)
        }
        let context = managedObjectContext
        // Read before the fetch: a commit in between makes the cache look stale, never fresh.
        let dependencies = useCache && cacheName != nil
            ? SectionCache.dependencies(request: request, sectionNameKeyPath: sectionNameKeyPath, context: context) : nil
        if let cacheName, let dependencies, let cached: [Section] = SectionCache.read(name: cacheName, dependencies: dependencies) {
            return cached
        }
        let sections = Self.sections(of: try context.fetchRowKeys(request, sectionNameKeyPath: sectionNameKeyPath))
        if let cacheName, let dependencies {
            SectionCache.write(sections, name: cacheName, dependencies: dependencies)
        }
        return sections
    }

    func fetchSectionEntityLayout(_ request: FetchRequest<Result>, sectionRequest: FetchRequest<ManagedObject>) throws -> [Section] {
        let context = managedObjectContext
        let sectionObjects = try context.fetch(sectionRequest)
        var sections: [Section] = []
        var indexByKey: [Int64: Int] = [:]
        for object in sectionObjects {
            indexByKey[object.objectID.rowKey] = sections.count
            sections.append(Section(name: Self.text(object.attributeValue(forKey: sectionNameKey!)), keys: [], sectionObjectKey: object.objectID.rowKey))
        }
        for object in try context.fetch(request) {
            guard let section = object.relatedObjects(forKey: sectionRelationshipKeyPath!).first as? ManagedObject,
                  let index = indexByKey[section.objectID.rowKey] else { continue }
            sections[index].keys.append(object.objectID.rowKey)
        }
        return sections
    }

    static func text(_ value: Value) -> String {
        switch value {
        case .null: return ""
        case .string(let s): return s
        default: return value.description
        }
    }
}
