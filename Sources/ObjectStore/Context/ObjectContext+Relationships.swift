import GRDB

extension ObjectContext {
    /// The objects at the other end of `relationship`, including unsaved changes: the
    /// stored key for a key-owning to-one, else the destination rows whose inverse key
    /// names `object`, in key order.
    func relatedObjects(of object: ManagedObject, relationship: RelationshipDescription) throws -> [ManagedObject] {
        if model.storesForeignKey(relationship, of: object.entity) {
            guard case .object(let id?)? = try storedValue(of: object, key: relationship.name) else { return [] }
            let target = try self.registeredObject(with: id)
            return target.isDeleted && target.managedObjectContext == nil ? [] : [target]
        }
        // Saved rows that name the object, unless changed here; then the changed objects that
        // name it now. No write transaction needed, however many changes are pending.
        let inverse = model.inverse(of: relationship)
        let destination = relationship.destinationEntity
        var related: [ManagedObject] = []
        if !object.objectID.isTemporaryID {
            let sql = "SELECT \(Schema.primaryKey) FROM \(destination.quotedDatabaseIdentifier) WHERE \(inverse.name.quotedDatabaseIdentifier) = ?"
            let key = object.objectID.sqlKey
            for rowKey in try store.database.read({ db in try Int64.fetchAll(db, sql: sql, arguments: [key]) }) {
                let candidate = try self.registeredObject(with: ObjectID(entityName: destination, sqlKey: rowKey))
                if !changedObjects.contains(candidate) { related.append(candidate) }
            }
        }
        for candidate in changedObjects where candidate.entity.name == destination && !candidate.isDeleted {
            if case .object(object.objectID)? = try storedValue(of: candidate, key: inverse.name) { related.append(candidate) }
        }
        return related.sorted { $0.objectID < $1.objectID }
    }

    /// Sets a to-one relationship, keeping its inverse consistent.
    func setRelatedObject(_ target: ManagedObject?, of object: ManagedObject, relationship: RelationshipDescription) throws {
        if let target { try checkDestination(target, of: relationship, from: object) }
        let inverse = model.inverse(of: relationship)
        if model.storesForeignKey(relationship, of: object.entity) {
            if !inverse.isToMany, let target {
                // One-to-one: whoever pointed at the target lets go.
                for other in try relatedObjects(of: target, relationship: inverse) where other !== object {
                    try setStored(.object(nil), of: other, key: relationship.name)
                }
            }
            try setStored(.object(target?.objectID), of: object, key: relationship.name)
        } else {
            // The key lives on the other side of this one-to-one.
            for old in try relatedObjects(of: object, relationship: relationship) where old !== target {
                try setStored(.object(nil), of: old, key: inverse.name)
            }
            if let target { try setStored(.object(object.objectID), of: target, key: inverse.name) }
        }
    }

    /// Replaces the members of a to-many relationship: members that leave get a nil inverse.
    func setRelatedObjects(_ targets: [ManagedObject], of object: ManagedObject, relationship: RelationshipDescription) throws {
        for target in targets { try checkDestination(target, of: relationship, from: object) }
        let inverse = model.inverse(of: relationship)
        let kept = Set(targets)
        for old in try relatedObjects(of: object, relationship: relationship) where !kept.contains(old) {
            try setStored(.object(nil), of: old, key: inverse.name)
        }
        for target in targets {
            try setStored(.object(object.objectID), of: target, key: inverse.name)
        }
    }

    private func checkDestination(_ target: ManagedObject, of relationship: RelationshipDescription, from object: ManagedObject) throws {
        guard target.entity.name == relationship.destinationEntity else {
            throw ContextError(.wrongType, entity: object.entity.name, key: relationship.name, objectID: object.objectID, "\(object.entity.name).\(relationship.name) takes \(relationship.destinationEntity) objects, not \(target.entity.name)")
        }
        guard target.managedObjectContext === self, !target.isDeleted else {
            throw ContextError(.unavailableObject, objectID: target.objectID, "\(target.objectID) is deleted or belongs to another context; fetch it in this context first")
        }
    }
}

extension ManagedObject {
    /// Adds `object` to the to-many relationship `key`.
    public func addObject(_ object: ManagedObject, toRelationship key: String) throws {
        guard let relationship = entity.relationship(named: key), relationship.isToMany else {
            throw ContextError(.unknownKey, entity: entity.name, key: key, "\(entity.name) has no to-many relationship '\(key)'")
        }
        try context().setRelatedObject(self, of: object, relationship: context().model.inverse(of: relationship))
    }

    /// Removes `object` from the to-many relationship `key` (its inverse becomes nil).
    public func removeObject(_ object: ManagedObject, fromRelationship key: String) throws {
        guard let relationship = entity.relationship(named: key), relationship.isToMany else {
            throw ContextError(.unknownKey, entity: entity.name, key: key, "\(entity.name) has no to-many relationship '\(key)'")
        }
        let context = try context()
        let inverse = context.model.inverse(of: relationship)
        guard try context.relatedObjects(of: object, relationship: inverse).first === self else { return }
        try context.setRelatedObject(nil, of: object, relationship: inverse)
    }
}
