import GRDB

/// The schema changes that bring a store from the model it was made for to a new model.
///
/// Only additions migrate in place: new entities, new attributes that are optional or have
/// a default, new optional to-one relationships, new indexes (and dropped indexes). Changes
/// that need no schema change (delete rules, defaults, length and value limits) are
/// accepted. Anything that would lose or reinterpret data throws ``StoreError`` with kind
/// ``StoreError/Kind/incompatibleModel``.
struct SchemaMigration {
    private var statements: [(sql: String, arguments: StatementArguments)] = []
    /// The entities whose tables the migration creates: their history triggers follow the
    /// statements, once the entity has its number in the history.
    private var addedEntities: [EntityDescription] = []

    init(from stored: Model?, to model: Model, path: String) throws {
        func refuse(_ place: String, _ reason: String) -> StoreError {
            StoreError(.incompatibleModel, path: path, "\(place): \(reason); the store cannot be migrated in place to this model (the file was left as it is). Keep the old definition, or export the data and create a new store")
        }
        guard let stored else {
            for entity in model.entities { addEntity(entity, in: model) }
            return
        }
        for old in stored.entities where model.entity(named: old.name) == nil {
            throw refuse(old.name, "the entity was removed")
        }
        for entity in model.entities {
            guard let old = stored.entity(named: entity.name) else {
                addEntity(entity, in: model)
                continue
            }
            try Self.checkKept(old, in: stored, as: entity, in: model, refuse: refuse)
            try addColumnsAndIndexes(of: entity, from: old, stored: stored, in: model, refuse: refuse)
        }
    }

    /// Refuses a change to what saved objects hold: an attribute or relationship removed,
    /// retyped, made required, or a relationship's destination, inverse or cardinality changed.
    private static func checkKept(_ old: EntityDescription, in stored: Model, as entity: EntityDescription, in model: Model,
                                  refuse: (String, String) -> StoreError) throws {
        for oldAttribute in old.attributes {
            let place = "\(entity.name).\(oldAttribute.name)"
            guard let attribute = entity.attribute(named: oldAttribute.name) else {
                throw refuse(place, "the attribute was removed")
            }
            if attribute.type != oldAttribute.type {
                throw refuse(place, "the type changed from \(oldAttribute.type) to \(attribute.type)")
            }
            if oldAttribute.isOptional && !attribute.isOptional {
                throw refuse(place, "the attribute became required; saved objects may have no value")
            }
        }
        for oldRelationship in old.relationships {
            let place = "\(entity.name).\(oldRelationship.name)"
            guard let relationship = entity.relationship(named: oldRelationship.name) else {
                throw refuse(place, "the relationship was removed")
            }
            if relationship.destinationEntity != oldRelationship.destinationEntity
                || relationship.isToMany != oldRelationship.isToMany
                || relationship.inverseName != oldRelationship.inverseName
                || model.storesForeignKey(relationship, of: entity) != stored.storesForeignKey(oldRelationship, of: old) {
                throw refuse(place, "the relationship's destination, inverse or cardinality changed")
            }
            if oldRelationship.isOptional && !relationship.isOptional {
                throw refuse(place, "the relationship became required; saved objects may have none")
            }
        }
    }

    /// The statements that add `entity`'s new attributes and relationships to its table and
    /// make its indexes what the model says; refuses a new required field with no default.
    private mutating func addColumnsAndIndexes(of entity: EntityDescription, from old: EntityDescription, stored: Model, in model: Model,
                                               refuse: (String, String) -> StoreError) throws {
        let table = entity.name.quotedDatabaseIdentifier
        for attribute in entity.attributes where old.attribute(named: attribute.name) == nil {
            let place = "\(entity.name).\(attribute.name)"
            if !attribute.isOptional && attribute.defaultValue.isNull {
                throw refuse(place, "a new required attribute needs a default value for the objects already saved; give it a default or make it optional")
            }
            let column = attribute.name.quotedDatabaseIdentifier
            statements.append(("ALTER TABLE \(table) ADD COLUMN \(column) \(attribute.type.sqlType)", []))
            if !attribute.defaultValue.isNull {
                statements.append(("UPDATE \(table) SET \(column) = ?", [attribute.defaultValue.databaseValue]))
            }
        }
        for relationship in entity.relationships where old.relationship(named: relationship.name) == nil {
            guard model.storesForeignKey(relationship, of: entity) else { continue }
            if !relationship.isOptional {
                throw refuse("\(entity.name).\(relationship.name)", "a new required relationship cannot be filled in for the objects already saved; make it optional")
            }
            statements.append(("ALTER TABLE \(table) ADD COLUMN \(relationship.name.quotedDatabaseIdentifier) INTEGER", []))
        }
        let oldIndexes = Dictionary(Schema.createIndexSQL(for: old, in: stored).map { ($0.name, $0.sql) }) { a, _ in a }
        let newIndexes = Dictionary(Schema.createIndexSQL(for: entity, in: model).map { ($0.name, $0.sql) }) { a, _ in a }
        for (name, sql) in oldIndexes where newIndexes[name] != sql {
            statements.append(("DROP INDEX IF EXISTS \(name.quotedDatabaseIdentifier)", []))
        }
        for (name, sql) in newIndexes.sorted(by: { $0.key < $1.key }) where oldIndexes[name] != sql {
            statements.append((sql, []))
        }
    }

    private mutating func addEntity(_ entity: EntityDescription, in model: Model) {
        statements.append((Schema.createTableSQL(for: entity, in: model), []))
        addedEntities.append(entity)
        statements += Schema.createIndexSQL(for: entity, in: model).map { ($0.sql, []) }
    }

    /// Runs the statements, inside the migrator's transaction.
    func apply(_ db: Database) throws {
        for statement in statements {
            try db.execute(sql: statement.sql, arguments: statement.arguments)
        }
        for entity in addedEntities {
            try Schema.installTriggers(for: entity, in: db)
        }
    }
}
