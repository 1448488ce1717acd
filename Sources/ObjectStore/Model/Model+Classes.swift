extension Model {
    /// A model whose entities are described by ``ManagedObject`` subclasses: one entity a
    /// class, its properties those the class declares with ``Attribute`` and ``Relationship``.
    ///
    /// ```swift
    /// final class Folder: ManagedObject {
    ///     @Attribute(minLength: 1) var name: String
    ///     @Relationship(inverse: "folder", deleteRule: .cascade) var notes: Set<Note>
    /// }
    /// final class Note: ManagedObject {
    ///     @Attribute var title: String
    ///     @Attribute var pinned: Bool?
    ///     @Relationship var folder: Folder?
    /// }
    /// let model = try Model(classes: [Folder.self, Note.self])
    /// ```
    ///
    /// - An entity is named ``ManagedObject/entityName`` (the class's name unless it is
    ///   overridden), has the indexes of ``ManagedObject/entityIndexes``, and makes objects of
    ///   its class (``EntityDescription/objectClass``).
    /// - An attribute's type and optionality come from the property's Swift type (see
    ///   ``AttributeValue``); its default value and limits from the wrapper's arguments.
    /// - A relationship's destination is the entity of the class its Swift type holds, which
    ///   must be in `classes`; it is to-many for an array or a set. Every relationship has an
    ///   inverse on the destination class: name it (`inverse:`) on one side of the pair and
    ///   the other side is completed; names given on both sides must agree. A pair named on
    ///   neither side is an error rather than a guess.
    ///
    /// Properties without these wrappers are not stored. The classes' properties are read by
    /// reflection from one detached object of each class, made with
    /// ``ManagedObject/init(entity:objectID:context:)`` and no context, so an override of that
    /// initializer must not need one.
    ///
    /// The model is then validated as ``init(entities:)`` does. Every problem, here or there,
    /// is a ``ModelError`` located at the class and property (`Note.folder`), saying what to
    /// change.
    public init(classes: [ManagedObject.Type]) throws {
        let reader = try ClassModelReader(classes: classes)
        let entities = try reader.entities()
        do {
            try self.init(entities: entities)
        } catch let error as ModelError {
            throw reader.relocated(error)
        }
    }
}

/// Reads entity descriptions from ``ManagedObject`` subclasses, with errors that name the
/// class and the Swift property.
private struct ClassModelReader {
    struct ClassInfo {
        let type: ManagedObject.Type
        let className: String
        let entityName: String
        let properties: [DeclaredProperty]

        func place(_ property: DeclaredProperty) -> String { "\(className).\(property.propertyName)" }

        var relationships: [DeclaredProperty] {
            properties.filter { if case .relationship = $0.kind { return true } else { return false } }
        }
    }

    let infos: [ClassInfo]

    init(classes: [ManagedObject.Type]) throws {
        var infos: [ClassInfo] = []
        for type in classes {
            let className = String(describing: type)
            if infos.contains(where: { $0.type == type }) {
                throw ModelError(className, "the class is listed twice in Model(classes:); list each class once")
            }
            let entityName = type.entityName
            if let other = infos.first(where: { $0.entityName.lowercased() == entityName.lowercased() }) {
                throw ModelError(className, "its entity name '\(entityName)' is also \(other.className)'s '\(other.entityName)' (names are compared ignoring case); override `class var entityName` in one of them")
            }
            let prototype = type.init(entity: EntityDescription(name: entityName), objectID: .temporary(entityName: entityName, number: 0), context: nil)
            infos.append(ClassInfo(type: type, className: className, entityName: entityName, properties: prototype.declaredProperties()))
        }
        self.infos = infos
    }

    func entities() throws -> [EntityDescription] {
        try infos.map { info in
            var attributes: [AttributeDescription] = []
            var relationships: [RelationshipDescription] = []
            for property in info.properties {
                switch property.kind {
                case .attribute(let description):
                    guard let description else {
                        throw ModelError(info.place(property), "\(property.valueTypeName) does not say which attribute type stores it; use String, Int, Int64, Double, Bool, Date, Data or an optional of one, or implement `static var attributeType` in its AttributeValue conformance")
                    }
                    attributes.append(description)
                case let .relationship(destinationClass, isToMany, inverseName, deleteRule, isOptional):
                    let (destination, inverse) = try resolve(property, of: info, to: destinationClass, inverse: inverseName)
                    relationships.append(RelationshipDescription(
                        name: property.key, destinationEntity: destination.entityName, inverseName: inverse.key,
                        isToMany: isToMany, deleteRule: deleteRule, isOptional: isOptional))
                }
            }
            return EntityDescription(
                name: info.entityName, attributes: attributes, relationships: relationships,
                indexes: info.type.entityIndexes, objectClass: info.type, ownership: info.type.entityOwnership)
        }
    }

    /// The destination class of the relationship `property` and the relationship there that
    /// is its inverse.
    private func resolve(
        _ property: DeclaredProperty, of info: ClassInfo, to destinationClass: ManagedObject.Type?, inverse inverseName: String?
    ) throws -> (ClassInfo, DeclaredProperty) {
        let place = info.place(property)
        guard let destinationClass else {
            throw ModelError(place, "\(property.valueTypeName) does not say which class its objects have; use Destination? for to-one, [Destination] or Set<Destination> for to-many")
        }
        guard let destination = infos.first(where: { $0.type == destinationClass }) else {
            throw ModelError(place, "its destination class \(destinationClass) is not in Model(classes:); add \(destinationClass).self to the list")
        }
        let pointingBack = destination.relationships.filter { relationshipDestination(of: $0) == info.type }
        guard let inverseName else {
            // Not named here: the other side must name this relationship.
            let naming = pointingBack.filter { declaredInverse(of: $0).map { names(property, $0) } == true }
            guard naming.count == 1 else {
                if naming.count > 1 {
                    throw ModelError(place, "\(naming.map(destination.place).joined(separator: " and ")) each name it as their inverse; name the one inverse here with @Relationship(inverse: \"...\")")
                }
                guard pointingBack.count == 1, let only = pointingBack.first else {
                    throw ModelError(place, "no inverse; name it here with @Relationship(inverse: \"...\")\(candidates(pointingBack, in: destination, to: info))")
                }
                throw ModelError(place, "no inverse; name it on one side of the pair: @Relationship(inverse: \"\(only.propertyName)\") here, or @Relationship(inverse: \"\(property.propertyName)\") on \(destination.place(only))")
            }
            return (destination, naming[0])
        }
        guard let inverse = destination.properties.first(where: { names($0, inverseName) }) else {
            throw ModelError(place, "inverse '\(inverseName)': \(destination.className) has no such property\(candidates(pointingBack, in: destination, to: info))")
        }
        guard case .relationship = inverse.kind else {
            throw ModelError(place, "inverse '\(inverseName)': \(destination.place(inverse)) is an attribute, not a relationship\(candidates(pointingBack, in: destination, to: info))")
        }
        guard relationshipDestination(of: inverse) == info.type else {
            throw ModelError(place, "inverse \(destination.place(inverse)) does not point back: it holds \(inverse.valueTypeName), not \(info.className) objects\(candidates(pointingBack, in: destination, to: info))")
        }
        if let named = declaredInverse(of: inverse), !names(property, named) {
            throw ModelError(place, "inverse \(destination.place(inverse)) names '\(named)' as its own inverse, not \(property.propertyName); make the two relationships name each other, or name the inverse on one side only")
        }
        return (destination, inverse)
    }

    private func relationshipDestination(of property: DeclaredProperty) -> ManagedObject.Type? {
        if case .relationship(let destination, _, _, _, _) = property.kind { return destination }
        return nil
    }

    private func declaredInverse(of property: DeclaredProperty) -> String? {
        if case .relationship(_, _, let inverse, _, _) = property.kind { return inverse }
        return nil
    }

    /// Whether `name` names `property`: its key, or its Swift name.
    private func names(_ property: DeclaredProperty, _ name: String) -> Bool {
        property.key == name || property.propertyName == name
    }

    /// What to name as an inverse: the relationships of `destination` back to `info`'s class.
    private func candidates(_ pointingBack: [DeclaredProperty], in destination: ClassInfo, to info: ClassInfo) -> String {
        pointingBack.isEmpty
            ? "; \(destination.className) has no relationship back to \(info.className): add one"
            : "; \(destination.className)'s relationships back to \(info.className): \(pointingBack.map(\.propertyName).joined(separator: ", "))"
    }

    /// `error`, from validating the entities, located at the class and Swift property.
    func relocated(_ error: ModelError) -> ModelError {
        for info in infos {
            for property in info.properties where error.location == "\(info.entityName).\(property.key)" {
                return ModelError(info.place(property), error.reason)
            }
            if error.location == info.entityName || error.location.hasPrefix(info.entityName + " ") {
                return ModelError(info.className + error.location.dropFirst(info.entityName.count), error.reason)
            }
        }
        return error
    }
}
