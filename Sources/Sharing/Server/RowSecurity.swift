import ObjectStore

/// Per-row visibility on the server: PostgreSQL row-level security made from the model's
/// ``Ownership``, and a change log that shows each role only what it may see.
///
/// - **Entity tables.** An entity with `.owner(attribute:sharedAttribute:)` gets the policy
///   "its owner is nil, or is the current role, or the object is shared", for reading and
///   for writing, and a trigger that sets the owner of an inserted row to the current role
///   and refuses (`insufficient_privilege`) a change of the owner or the shared attribute by
///   another role than the owner (or the table's owner). An entity with
///   `.inherited(through:)` gets "the relationship names no object, or one the current role
///   sees" (PostgreSQL applies the destination's own policy inside).
/// - **The change log.** Each entry says who may read it (`visible_to`: a role, or NULL for
///   every role; `hidden_from`: a role that may not), as the trigger that writes it finds
///   the object's visibility at that moment; the log's policy lets a role read only its
///   entries. When an object's visibility changes (shared, unshared, moved to another
///   list), those who no longer see it get a `hide` entry (their desktop drops the object,
///   without a delete going anywhere), and those who see it now get its whole row; the
///   objects that inherit their visibility from it get both, too.
///
/// The table's owner (the role that made the schema) bypasses the policies, as PostgreSQL's
/// table owners do; so do superusers.
enum RowSecurity {

    /// The arguments the change log's trigger gets for `entity`: how it finds an object's
    /// visibility (`owner`, its owner and shared columns, then each inheriting entity and its
    /// relationship; or `through`, the owning entity, the relationship, and the owning
    /// entity's owner and shared columns), or none.
    static func recordArguments(of entity: EntityDescription, in model: Model) -> [String] {
        switch entity.ownership {
        case nil:
            return []
        case .owner(let owner, let shared)?:
            let followers = model.entities.flatMap { other -> [String] in
                guard case .inherited(let name)? = other.ownership, other.relationship(named: name)?.destinationEntity == entity.name else { return [] }
                return [other.name, name]
            }
            return ["owner", owner, shared ?? ""] + followers
        case .inherited(let name)?:
            guard let destination = entity.relationship(named: name).flatMap({ model.entity(named: $0.destinationEntity) }),
                  case .owner(let owner, let shared)? = destination.ownership else { return [] }
            return ["through", destination.name, name, owner, shared ?? ""]
        }
    }

    /// The policy and triggers of `entity`'s table, when it has an ownership.
    static func entityStatements(_ entity: EntityDescription, in model: Model) -> [String] {
        let table = ServerNames.quoted(entity.name)
        let rule: String
        var statements: [String] = []
        switch entity.ownership {
        case nil:
            return []
        case .owner(let owner, let shared)?:
            let ownerColumn = ServerNames.quoted(owner)
            rule = "\(ownerColumn) IS NULL OR \(ownerColumn) = current_user" + (shared.map { " OR \(ServerNames.quoted($0)) IS TRUE" } ?? "")
            statements.append("CREATE OR REPLACE TRIGGER \(ServerNames.quoted("Z_\(entity.name)_owner")) BEFORE INSERT OR UPDATE ON \(table) "
                              + "FOR EACH ROW EXECUTE FUNCTION \(ServerNames.quoted(ServerNames.keepOwner))('\(owner)', '\(shared ?? "")')")
        case .inherited(let name)?:
            let destination = ServerNames.quoted(entity.relationship(named: name)?.destinationEntity ?? "")
            let column = "\(table).\(ServerNames.quoted(name))"
            rule = "\(column) IS NULL OR EXISTS (SELECT 1 FROM \(destination) d WHERE d.\(ServerNames.quoted(ServerNames.objectID)) = \(column))"
        }
        return statements + [
            "ALTER TABLE \(table) ENABLE ROW LEVEL SECURITY",
            "DROP POLICY IF EXISTS \(ServerNames.quoted(ServerNames.rowPolicy)) ON \(table)",
            "CREATE POLICY \(ServerNames.quoted(ServerNames.rowPolicy)) ON \(table) USING (\(rule)) WITH CHECK (\(rule))",
        ]
    }

    /// The change log's reader columns and policy, and its `hide` entries.
    static var logStatements: [String] {
        let log = ServerNames.quoted(ServerNames.changeLog)
        let check = ServerNames.quoted("\(ServerNames.changeLog)_op_check")
        return [
            "ALTER TABLE \(log) ADD COLUMN IF NOT EXISTS visible_to text",
            "ALTER TABLE \(log) ADD COLUMN IF NOT EXISTS hidden_from text",
            "ALTER TABLE \(log) DROP CONSTRAINT IF EXISTS \(check)",
            "ALTER TABLE \(log) ADD CONSTRAINT \(check) CHECK (op IN ('insert', 'update', 'delete', 'hide')) NOT VALID",
            "ALTER TABLE \(log) ENABLE ROW LEVEL SECURITY",
            "DROP POLICY IF EXISTS \(ServerNames.quoted(ServerNames.logPolicy)) ON \(log)",
            "CREATE POLICY \(ServerNames.quoted(ServerNames.logPolicy)) ON \(log) FOR SELECT "
                + "USING ((visible_to IS NULL OR visible_to = current_user) AND (hidden_from IS NULL OR hidden_from <> current_user))",
        ]
    }

    /// The functions the change log's trigger calls to find who sees an object and to log
    /// who stopped or started seeing it. None is for other roles to call: they would read
    /// owners of rows they may not see, or write the log.
    static var functionStatements: [String] {
        let log = ServerNames.quoted(ServerNames.changeLog)
        let id = ServerNames.quoted(ServerNames.objectID), version = ServerNames.quoted(ServerNames.version)
        return [
            // Who sees the object whose row is `r`: NULL for every role, a role's name, or ''
            // for none (an inheriting object whose owning object was deleted in this
            // transaction and left no trace).
            """
            CREATE OR REPLACE FUNCTION \(ServerNames.quoted(ServerNames.visibleTo))(r jsonb, how text[]) RETURNS text
            LANGUAGE plpgsql STABLE SET search_path FROM CURRENT AS $$
            DECLARE
                parent jsonb;
                parent_id uuid;
                found_to text;
            BEGIN
                IF how[1] = 'owner' THEN
                    IF r ->> how[2] IS NULL OR (how[3] <> '' AND coalesce((r ->> how[3])::boolean, false)) THEN
                        RETURN NULL;
                    END IF;
                    RETURN r ->> how[2];
                ELSIF how[1] = 'through' THEN
                    parent_id := (r ->> how[3])::uuid;
                    IF parent_id IS NULL THEN
                        RETURN NULL;
                    END IF;
                    EXECUTE format('SELECT to_jsonb(p) FROM %I p WHERE \(id) = $1', how[2]) INTO parent USING parent_id;
                    IF parent IS NOT NULL THEN
                        RETURN \(ServerNames.quoted(ServerNames.visibleTo))(parent, ARRAY['owner', how[4], how[5]]);
                    END IF;
                    SELECT c.visible_to INTO found_to FROM \(log) c
                    WHERE c.txid = pg_current_xact_id() AND c.object = parent_id AND c.op = 'delete'
                    ORDER BY c.seq DESC LIMIT 1;
                    IF FOUND THEN
                        RETURN found_to;
                    END IF;
                    RETURN '';
                END IF;
                RETURN NULL;
            END
            $$
            """,
            // Those who saw the object and no longer do: every role but the new reader, or
            // the old reader.
            """
            CREATE OR REPLACE FUNCTION \(ServerNames.quoted(ServerNames.hide))(entity_name text, object_id uuid, object_version bigint, old_to text, new_to text) RETURNS void
            LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
            BEGIN
                IF old_to IS NULL THEN
                    INSERT INTO \(log) (entity, object, op, version, visible_to, hidden_from)
                    VALUES (entity_name, object_id, 'hide', object_version, NULL, new_to);
                ELSIF new_to IS NOT NULL THEN
                    INSERT INTO \(log) (entity, object, op, version, visible_to)
                    VALUES (entity_name, object_id, 'hide', object_version, old_to);
                END IF;
            END
            $$
            """,
            // The objects of `child` whose `fk` names `parent`, whose visibility changed
            // with it: a hide for those who lost them, their whole rows for those who see
            // them now.
            """
            CREATE OR REPLACE FUNCTION \(ServerNames.quoted(ServerNames.refollow))(child text, fk text, parent uuid, old_to text, new_to text) RETURNS void
            LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
            DECLARE
                r record;
            BEGIN
                FOR r IN EXECUTE format('SELECT \(id) AS id, \(version) AS version, to_jsonb(t) - %L - %L AS image FROM %I t WHERE %I = $1',
                                        '\(ServerNames.objectID)', '\(ServerNames.version)', child, fk) USING parent LOOP
                    PERFORM \(ServerNames.quoted(ServerNames.hide))(child, r.id, r.version, old_to, new_to);
                    IF old_to IS NOT NULL THEN
                        INSERT INTO \(log) (entity, object, op, version, changed, "row", visible_to, hidden_from)
                        VALUES (child, r.id, 'update', r.version, ARRAY(SELECT k FROM jsonb_object_keys(r.image) AS k ORDER BY k), r.image,
                                new_to, CASE WHEN new_to IS NULL THEN old_to END);
                    END IF;
                END LOOP;
            END
            $$
            """,
            // An owned row: inserted, it belongs to the role inserting it; only its owner
            // (or the table's) may give it away, share or unshare it.
            """
            CREATE OR REPLACE FUNCTION \(ServerNames.quoted(ServerNames.keepOwner))() RETURNS trigger
            LANGUAGE plpgsql AS $$
            DECLARE
                was jsonb;
                became jsonb;
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    RETURN jsonb_populate_record(NEW, jsonb_build_object(TG_ARGV[0], current_user::text));
                END IF;
                was := to_jsonb(OLD);
                became := to_jsonb(NEW);
                IF (was -> TG_ARGV[0] IS DISTINCT FROM became -> TG_ARGV[0]
                        OR (TG_ARGV[1] <> '' AND was -> TG_ARGV[1] IS DISTINCT FROM became -> TG_ARGV[1]))
                    AND was ->> TG_ARGV[0] IS DISTINCT FROM current_user::text
                    AND NOT pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'MEMBER') THEN
                    RAISE EXCEPTION 'only its owner (%) may share, unshare or give away this %', coalesce(was ->> TG_ARGV[0], 'none'), TG_TABLE_NAME
                        USING ERRCODE = 'insufficient_privilege';
                END IF;
                RETURN NEW;
            END
            $$
            """,
            "REVOKE EXECUTE ON FUNCTION \(ServerNames.quoted(ServerNames.visibleTo))(jsonb, text[]) FROM PUBLIC",
            "REVOKE EXECUTE ON FUNCTION \(ServerNames.quoted(ServerNames.hide))(text, uuid, bigint, text, text) FROM PUBLIC",
            "REVOKE EXECUTE ON FUNCTION \(ServerNames.quoted(ServerNames.refollow))(text, text, uuid, text, text) FROM PUBLIC",
        ]
    }
}
