import Logging
import ObjectStore
import PostgresNIO

/// The tables, change log and triggers that share a model's objects in a PostgreSQL
/// database.
///
/// Each entity has a table named after it, keyed by the objects' global IDs
/// (`"Z_ID" uuid`), with a `"Z_VERSION"` that a trigger raises on every update, one column
/// per attribute and one per to-one relationship that the local store keeps as a key (see
/// `Model.storesForeignKey(_:of:)`), holding the destination's global ID. No foreign-key
/// constraints: the stores check their relationships, the server only carries them.
///
/// Triggers record every committed write, whoever makes it (a desktop, `psql`), in the
/// change log `"Z_CHANGES"`: the writing transaction's ID (`xid8`), a sequence number, the
/// entity, the object, the kind of change, the object's version, the names of the columns
/// that changed and the row as it became. Updates that change nothing are dropped before
/// they are written. Each statement that changes an entity table sends a notification
/// without a payload on ``notificationChannel``: a wake-up for listeners, never data.
///
/// ``create(on:logger:)`` is idempotent and safe to run from several desktops at once: it
/// creates what is missing, adds the columns of attributes and relationships that a newer
/// model has, and replaces the trigger functions with this version's. A schema this version
/// already made is left alone (the fingerprints of the versions that ran are kept on the
/// server, `schema:MD5` in `"Z_SHARING"`), so that roles that do not own it (a reader, a
/// colleague's role) connect to it; another version needs the owner's desktop once. So does
/// a column of the model's that was dropped by hand: it is added back, with no values (the
/// desktops read and write the tables by their columns).
///
/// The trigger function that writes the change log runs as the schema's owner (`SECURITY
/// DEFINER`, its search path the schema's then `pg_temp`, and no role but the owner may
/// attach it to a table): a role that writes entity tables needs no right on the log but
/// reading it, and cannot forge its entries.
///
/// Entities with an `Ownership` get row-level security, and the log's entries say who may
/// read them: see ``RowSecurity``.
///
/// ## Topics
/// - ``init(model:)``
/// - ``create(on:logger:)``
/// - ``statements``
/// - ``notificationChannel``
package struct ServerSchema: Sendable {
    /// The model whose entities get tables.
    package let model: Model

    /// The schema of `model`'s entities.
    package init(model: Model) {
        self.model = model
    }

    /// The channel on which every change to an entity table sends a wake-up notification.
    package static let notificationChannel = ServerNames.channel

    /// Creates what is missing of the schema, in one transaction.
    ///
    /// A transaction-level advisory lock keeps two desktops that create the schema at
    /// once from colliding in PostgreSQL's catalog: the second waits, then finds it all
    /// there.
    package func create(on connection: PostgresConnection, logger: Logger) async throws {
        let statements = self.statements
        let fingerprint = statements.joined(separator: ";\n")
        var missing = try await missingColumns(on: connection, logger: logger)
        if missing.isEmpty, try await isCurrent(fingerprint, on: connection, logger: logger) { return }
        do {
            // The columns added back to tables made by this model, which only a warning tells:
            // logged once the transaction commits, so that a role that may not add them
            // (which fails below) never claims it did.
            let addedBack: [String] = try await connection.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))", logger: logger)
                // Made meanwhile by the desktop that held the lock: its tables may already be
                // in use, and this transaction's DDL would lock them against those writers
                // (a deadlock with a desktop seeding the database).
                missing = try await missingColumns(on: connection, logger: logger)
                let current = try await isCurrent(fingerprint, on: connection, logger: logger)
                if missing.isEmpty && current { return [] }
                // The trigger functions keep this search path (SET search_path FROM CURRENT):
                // pg_temp last, so that no temporary table of a role stands in for the log.
                try await connection.query("SELECT set_config('search_path', quote_ident(current_schema()) || ', pg_temp', true)", logger: logger)
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("""
                    INSERT INTO \(unescaped: ServerNames.quoted(ServerNames.state)) (key, value) VALUES ('schema:' || md5(\(fingerprint)), now()::text)
                    ON CONFLICT (key) DO NOTHING
                    """, logger: logger)
                return current ? missing : []
            }
            if !addedBack.isEmpty {
                logger.warning("sharing: the shared tables on this server lacked \(addedBack.joined(separator: ", ")), dropped by hand: added back, with no values")
            }
        } catch where serverError(error)?.sqlState == "42501" {
            let what = missing.isEmpty ? "were made for another version of the model (or before this version of the library)"
                : "lack \(missing.joined(separator: ", ")) (dropped by hand?)"
            throw SharingError.permissionDenied(reason: "the shared tables on this server \(what), and only their owner may change them: the owner's desktop must connect once with this version (\(serverError(error)!.message))")
        }
    }

    /// The columns of the model's entity tables that the server lacks, each as
    /// `"Table".column`: all of them before the schema is made, and any dropped by hand
    /// since (which the fingerprint cannot tell). A desktop reads and writes the tables by
    /// their columns, so one missing column would stop every push and join; ``create(on:logger:)``
    /// adds it back, with no values, as it adds a newer model's.
    private func missingColumns(on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        let expected = model.entities.flatMap { entity in
            ([ServerNames.objectID, ServerNames.version] + ServerColumns(entity, model: model).names).map { (entity.name, $0) }
        }
        let rows = try await connection.query("""
            SELECT c.relname::text, a.attname::text FROM pg_catalog.pg_attribute a
            JOIN pg_catalog.pg_class c ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relname = ANY(\(model.entities.map(\.name))) AND a.attnum > 0 AND NOT a.attisdropped
            """, logger: logger)
        var present = Set<String>()
        for try await (table, column) in rows.decode((String, String).self) { present.insert(ServerNames.quoted(table) + "." + column) }
        return expected.map { ServerNames.quoted($0.0) + "." + $0.1 }.filter { !present.contains($0) }
    }

    /// Whether the schema of `fingerprint` was made on the server already. The state table
    /// is looked for in `pg_class` with the statement's snapshot: `to_regclass` would use the
    /// session's catalog cache, which in a transaction begun before another one made the
    /// table still says it is missing.
    private func isCurrent(_ fingerprint: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let state = ServerNames.quoted(ServerNames.state)
        let exists = try await connection.query("""
            SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                           WHERE c.relname = \(ServerNames.state) AND n.nspname = current_schema())
            """, logger: logger)
        var stateExists = false
        for try await value in exists.decode(Bool.self) { stateExists = value }
        guard stateExists else { return false }
        let current = try await connection.query("SELECT EXISTS (SELECT 1 FROM \(unescaped: state) WHERE key = 'schema:' || md5(\(fingerprint)))",
                                                 logger: logger)
        for try await isCurrent in current.decode(Bool.self) { return isCurrent }
        return false
    }

    /// The key of the advisory lock that ``create(on:logger:)`` holds: a fixed number of
    /// this library's own ("FRshare" in ASCII).
    static let advisoryLockKey: Int64 = 0x46_52_73_68_61_72_65

    /// The statements that ``create(on:logger:)`` runs, in order; each is idempotent.
    package var statements: [String] {
        Self.functionStatements + [createChangeLogSQL] + addPushColumnSQL + RowSecurity.logStatements + Self.stateStatements
            + model.entities.flatMap(entityStatements)
            // After every table: a policy may name another entity's.
            + model.entities.flatMap { RowSecurity.entityStatements($0, in: model) }
    }

    /// The server's own facts, `"Z_SHARING" (key, value)`: `identity`, a random ID given
    /// when the schema is first created, by which a store knows the database it shares
    /// with (another database, or this one dropped and made again, has another), and
    /// `prunedThrough`, the newest change deleted from the log (see
    /// ``ServerChangeLog/prune(keepingLast:on:logger:)``); and `"Z_PUSHES"`, the identities of
    /// the pushes that added to counters (kept 30 days), so that one sent twice adds once;
    /// and `"Z_DELETED"`, the version of each deleted object's delete and its transaction,
    /// from which an object inserted again under its global ID goes on. Deletes are
    /// forgotten at each prune of the log (``ServerChangeLog/prune(keepingLast:on:logger:)``),
    /// and `deletedFloor` in `"Z_SHARING"` keeps the highest version of a delete forgotten:
    /// every object inserted later starts above it, so that a desktop still holding the
    /// tombstone of a forgotten delete takes the object when it is inserted again.
    private static var stateStatements: [String] {
        let table = ServerNames.quoted(ServerNames.state)
        return [
            "CREATE TABLE IF NOT EXISTS \(table) (key text PRIMARY KEY, value text NOT NULL)",
            "INSERT INTO \(table) (key, value) VALUES ('identity', gen_random_uuid()::text) ON CONFLICT (key) DO NOTHING",
            "CREATE TABLE IF NOT EXISTS \(ServerNames.quoted(ServerNames.pushes)) (id uuid PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())",
            "CREATE TABLE IF NOT EXISTS \(ServerNames.quoted(ServerNames.deleted)) (id uuid PRIMARY KEY, version bigint NOT NULL)",
            // A schema made before deletes were forgotten: its deletes count as made now.
            "ALTER TABLE \(ServerNames.quoted(ServerNames.deleted)) ADD COLUMN IF NOT EXISTS txid xid8 NOT NULL DEFAULT pg_current_xact_id()",
        ]
    }

    private var createChangeLogSQL: String {
        let log = ServerNames.quoted(ServerNames.changeLog)
        // (txid, seq) orders the log and is what a puller's cursor holds: see ServerChangeLog.
        return """
            CREATE TABLE IF NOT EXISTS \(log) (
                txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                seq bigserial NOT NULL,
                entity text NOT NULL,
                object uuid NOT NULL,
                op text NOT NULL CHECK (op IN ('insert', 'update', 'delete')),
                version bigint NOT NULL,
                changed text[],
                "row" jsonb,
                PRIMARY KEY (txid, seq)
            )
            """
    }

    /// The push that wrote a change, when it added to counters (the writing transaction's
    /// `fetched_results.push` setting), with an index of the changes that have one: a
    /// desktop that pulls changes holding its own push before it recorded the push's end
    /// finds from which version they do (see ``ServerWriter``).
    private var addPushColumnSQL: [String] {
        let log = ServerNames.quoted(ServerNames.changeLog)
        return ["ALTER TABLE \(log) ADD COLUMN IF NOT EXISTS push uuid",
                "CREATE INDEX IF NOT EXISTS \(ServerNames.quoted("Z_CHANGES_push")) ON \(log) (push) WHERE push IS NOT NULL"]
    }

    private func entityStatements(_ entity: EntityDescription) -> [String] {
        let table = ServerNames.quoted(entity.name)
        let id = ServerNames.quoted(ServerNames.objectID)
        let version = ServerNames.quoted(ServerNames.version)
        let columns = entity.attributes.map { ($0.name, $0.type.serverType) }
            + entity.relationships.filter { model.storesForeignKey($0, of: entity) }.map { ($0.name, "uuid") }
        let trigger = { (suffix: String) in ServerNames.quoted("Z_\(entity.name)_\(suffix)") }
        let recordArguments = RowSecurity.recordArguments(of: entity, in: model).map { "'\($0)'" }.joined(separator: ", ")
        return ["CREATE TABLE IF NOT EXISTS \(table) (\(id) uuid PRIMARY KEY, \(version) bigint NOT NULL DEFAULT 1)"]
            // One column at a time: a newer model's columns are added to an older table.
            + columns.map { "ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(ServerNames.quoted($0.0)) \($0.1)" }
            + [
                // Its argument says that the table's inserts read `insertFloorSetting` (a
                // table whose log trigger runs once a statement, which checks it); any
                // other's inserts query the deletes for each row.
                "CREATE OR REPLACE TRIGGER \(trigger("version")) BEFORE INSERT ON \(table) "
                    + "FOR EACH ROW EXECUTE FUNCTION \(ServerNames.quoted(ServerNames.nextVersion))(\(recordArguments.isEmpty ? "'read'" : ""))",
                // An update that raises the version by one itself and keeps the ID (a
                // desktop's push) needs no call of the function: its condition is checked
                // without one, and the call was about a third of such an update's time on the
                // server. Any other (a person's, in psql) goes through the function.
                "CREATE OR REPLACE TRIGGER \(trigger("version_update")) BEFORE UPDATE ON \(table) FOR EACH ROW "
                    + "WHEN (NEW.\(version) IS DISTINCT FROM OLD.\(version) + 1 OR NEW.\(id) IS DISTINCT FROM OLD.\(id)) "
                    + "EXECUTE FUNCTION \(ServerNames.quoted(ServerNames.nextVersion))()",
                "CREATE OR REPLACE TRIGGER \(trigger("wake")) AFTER INSERT OR UPDATE OR DELETE ON \(table) "
                    + "FOR EACH STATEMENT EXECUTE FUNCTION \(ServerNames.quoted(ServerNames.wakeUp))()",
            ]
            + recordStatements(entity, table: table, arguments: recordArguments)
    }

    /// The triggers that record `entity`'s changes in the log. An entity with an ownership
    /// has a row trigger: who may read each entry depends on the row, and a row that changes
    /// hands hides itself from those who lose it. Any other has one trigger a statement for
    /// each kind of change, which records the statement's rows with one insert into the log
    /// (`REFERENCING … TABLE`): a push of a thousand updates ran the row trigger's four
    /// statements a thousand times, about two thirds of the server's processor time while
    /// four desktops wrote as fast as they could. The triggers of the other kind are dropped,
    /// so that a model that gains or loses an ownership changes them.
    private func recordStatements(_ entity: EntityDescription, table: String, arguments: String) -> [String] {
        let trigger = { (suffix: String) in ServerNames.quoted("Z_\(entity.name)_\(suffix)") }
        let function = ServerNames.quoted(ServerNames.recordChanges)
        let perStatement = [("inserts", "INSERT", "NEW TABLE AS new_rows"), ("updates", "UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
                            ("deletes", "DELETE", "OLD TABLE AS old_rows")]
        if !arguments.isEmpty {
            return (perStatement.map { "record_\($0.0)" } + ["insert_floor"]).map { "DROP TRIGGER IF EXISTS \(trigger($0)) ON \(table)" } + [
                "CREATE OR REPLACE TRIGGER \(trigger("record")) AFTER INSERT OR UPDATE OR DELETE ON \(table) "
                    + "FOR EACH ROW EXECUTE FUNCTION \(ServerNames.quoted(ServerNames.recordChange))(\(arguments))",
            ]
        }
        // PostgreSQL gives transition tables only to a trigger of one kind of change.
        return ["DROP TRIGGER IF EXISTS \(trigger("record")) ON \(table)"] + perStatement.map { name, event, transition in
            "CREATE OR REPLACE TRIGGER \(trigger("record_\(name)")) AFTER \(event) ON \(table) REFERENCING \(transition) "
                + "FOR EACH STATEMENT EXECUTE FUNCTION \(function)()"
        } + [
            // What the version trigger's inserts start above, read once a statement: the
            // insert's log trigger (above) checks it held for every row.
            "CREATE OR REPLACE TRIGGER \(trigger("insert_floor")) BEFORE INSERT ON \(table) "
                + "FOR EACH STATEMENT EXECUTE FUNCTION \(ServerNames.quoted(ServerNames.insertFloor))()",
        ]
    }

    /// The trigger functions, shared by all entity tables: they read the table's name and
    /// the row as JSON, so they need no change when the model does.
    private static var functionStatements: [String] {
        let log = ServerNames.quoted(ServerNames.changeLog)
        let id = ServerNames.quoted(ServerNames.objectID)
        let version = ServerNames.quoted(ServerNames.version)
        let visibleTo = ServerNames.quoted(ServerNames.visibleTo), hide = ServerNames.quoted(ServerNames.hide)
        let refollow = ServerNames.quoted(ServerNames.refollow), deleted = ServerNames.quoted(ServerNames.deleted)
        let state = ServerNames.quoted(ServerNames.state)
        // The highest version of a delete forgotten (see `ServerChangeLog.forgetDeletes`),
        // and the version of the inserted object's remembered delete: what an insert's
        // version starts above.
        let forgottenFloor = "coalesce((SELECT s.value::bigint FROM \(state) s WHERE s.key = '\(ServerNames.deletedFloorKey)'), 0)"
        let rememberedDelete = "coalesce((SELECT d.version FROM \(deleted) d WHERE d.id = NEW.\(id)), 0)"
        return RowSecurity.functionStatements + [
            // The version counts the writes of a row. Writes of one row are serialized by its
            // row lock, so versions follow their commit order, which transaction IDs do not
            // (a transaction may take its ID before another that commits first). An update
            // that changes nothing is dropped, so that it neither raises the version nor
            // reaches the log. (An update that sets the version to the row's next itself is
            // not given to this function: see the trigger. A desktop's push sets it so, and
            // sends only the fields that change.) An object inserted again under the global ID of a deleted one
            // goes on from its delete's version, or from the highest version of a delete
            // forgotten, whichever is higher (run as the schema's owner, which reads the
            // deleted objects' table).
            //
            // Those two lookups a row took about a third of the server's time of a big
            // insert (a store's first push, a `COPY`). A table whose log trigger runs once a
            // statement also has a statement trigger that reads, before the rows go in, the
            // highest forgotten delete and whether any delete is remembered
            // (`insertFloorSetting`, for this table): with none remembered, a row needs no
            // query. The setting is the caller's to change meanwhile (a function in the
            // inserted values may), so the log trigger checks every inserted row's version
            // against the deletes at the statement's end, and refuses the statement if one
            // is not above them. Only such a table's version trigger reads the setting (its
            // argument says so): another's (an entity with an ownership) has no check, and
            // the setting could be written before its statement.
            """
            CREATE OR REPLACE FUNCTION \(ServerNames.quoted(ServerNames.nextVersion))() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
            DECLARE
                read text[];
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    -- (An expression with a query in it, even in a branch not taken, runs
                    -- through the executor: each query has an assignment of its own.)
                    IF TG_NARGS > 0 THEN
                        read := string_to_array(current_setting('\(ServerNames.insertFloorSetting)', true), ':');
                    END IF;
                    IF read[1] = TG_RELID::text AND read[3] = 'false' THEN
                        NEW.\(version) := 1 + read[2]::bigint;
                    ELSIF read[1] = TG_RELID::text THEN
                        NEW.\(version) := 1 + greatest(read[2]::bigint, \(rememberedDelete));
                    ELSE
                        NEW.\(version) := 1 + greatest(\(rememberedDelete), \(forgottenFloor));
                    END IF;
                    RETURN NEW;
                END IF;
                IF NEW.\(id) IS DISTINCT FROM OLD.\(id) THEN
                    RAISE EXCEPTION 'the global ID of a % cannot change (% to %); delete the object and insert another', TG_TABLE_NAME, OLD.\(id), NEW.\(id);
                END IF;
                NEW.\(version) := OLD.\(version);
                IF NEW IS NOT DISTINCT FROM OLD THEN
                    RETURN NULL;
                END IF;
                NEW.\(version) := OLD.\(version) + 1;
                RETURN NEW;
            END
            $$
            """,
            // The row as it became, without its ID and version (columns of their own in the
            // log), and the names of the columns that changed: all of them for an insert.
            """
            CREATE OR REPLACE FUNCTION \(ServerNames.quoted(ServerNames.recordChange))() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
            DECLARE
                new_row jsonb;
                changed text[];
                how text[] := '{}';
                old_to text;
                new_to text;
                i int;
            BEGIN
                -- Who may read the entry (see RowSecurity): every role, unless the entity
                -- has an ownership.
                IF TG_NARGS > 0 THEN
                    FOR i IN 0 .. TG_NARGS - 1 LOOP
                        how := how || TG_ARGV[i];
                    END LOOP;
                    IF TG_OP <> 'INSERT' THEN
                        old_to := \(visibleTo)(to_jsonb(OLD), how);
                    END IF;
                    IF TG_OP <> 'DELETE' THEN
                        new_to := \(visibleTo)(to_jsonb(NEW), how);
                    END IF;
                END IF;
                IF TG_OP = 'DELETE' THEN
                    INSERT INTO \(log) (entity, object, op, version, visible_to)
                    VALUES (TG_TABLE_NAME, OLD.\(id), 'delete', OLD.\(version) + 1, old_to);
                    INSERT INTO \(deleted) (id, version) VALUES (OLD.\(id), OLD.\(version) + 1)
                    ON CONFLICT (id) DO UPDATE SET version = excluded.version, txid = excluded.txid;
                    RETURN NULL;
                END IF;
                new_row := to_jsonb(NEW) - '\(ServerNames.objectID)' - '\(ServerNames.version)';
                IF TG_OP = 'INSERT' THEN
                    SELECT array_agg(key ORDER BY key) INTO changed FROM jsonb_object_keys(new_row) AS key;
                ELSE
                    SELECT array_agg(n.key ORDER BY n.key) INTO changed
                    FROM jsonb_each(new_row) AS n
                    JOIN jsonb_each(to_jsonb(OLD)) AS o ON o.key = n.key
                    WHERE n.value IS DISTINCT FROM o.value;
                END IF;
                INSERT INTO \(log) (entity, object, op, version, changed, "row", push, visible_to)
                VALUES (TG_TABLE_NAME, NEW.\(id), lower(TG_OP), NEW.\(version), coalesce(changed, '{}'), new_row,
                        nullif(current_setting('\(ServerNames.pushSetting)', true), '')::uuid, new_to);
                -- Seen by others now: those who lost it hide it (who gained it take the row
                -- above), and the objects that inherit its visibility follow.
                IF TG_OP = 'UPDATE' AND old_to IS DISTINCT FROM new_to THEN
                    PERFORM \(hide)(TG_TABLE_NAME, NEW.\(id), NEW.\(version), old_to, new_to);
                    i := 4;
                    WHILE how[1] = 'owner' AND i < coalesce(array_length(how, 1), 0) LOOP
                        PERFORM \(refollow)(how[i], how[i + 1], NEW.\(id), old_to, new_to);
                        i := i + 2;
                    END LOOP;
                END IF;
                RETURN NULL;
            END
            $$
            """,
            // The same, a statement's rows at once (`recordStatements`): no entity with an
            // ownership has these triggers, so no entry has readers of its own. Each
            // trigger has the transition tables of its kind of change. `OFFSET 0` keeps
            // each row's JSON a column made once: the planner would otherwise put the
            // expression in place of each use, and make the old row's JSON again for each
            // of its keys. Every inserted row has the same keys, its table's columns: they
            // are listed once a statement. An inserted row whose version is not above its
            // object's remembered delete and every forgotten one (see the version trigger)
            // fails the statement.
            """
            CREATE OR REPLACE FUNCTION \(ServerNames.quoted(ServerNames.recordChanges))() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
            DECLARE
                push uuid := nullif(current_setting('\(ServerNames.pushSetting)', true), '')::uuid;
                columns text[];
                low record;
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    INSERT INTO \(log) (entity, object, op, version)
                    SELECT TG_TABLE_NAME, o.\(id), 'delete', o.\(version) + 1 FROM old_rows o;
                    INSERT INTO \(deleted) (id, version) SELECT o.\(id), o.\(version) + 1 FROM old_rows o
                    ON CONFLICT (id) DO UPDATE SET version = excluded.version, txid = excluded.txid;
                ELSIF TG_OP = 'INSERT' THEN
                    SELECT t.\(id) AS id, t.\(version) AS version, greatest(d.version, f.floor) AS above INTO low
                    FROM new_rows t LEFT JOIN \(deleted) d ON d.id = t.\(id),
                         (SELECT \(forgottenFloor) AS floor) f
                    WHERE t.\(version) <= greatest(d.version, f.floor) LIMIT 1;
                    IF FOUND THEN
                        RAISE EXCEPTION 'the % % was given version %, not above the version of a delete (%), so nothing of this statement was written: run it again, and do not change the setting \(ServerNames.insertFloorSetting) in it', TG_TABLE_NAME, low.id, low.version, low.above
                            USING HINT = 'either a delete committed while the statement ran (running it again is enough), or the statement changed \(ServerNames.insertFloorSetting) (a function in its values may), which only the triggers of the schema may set';
                    END IF;
                    SELECT coalesce(array_agg(k ORDER BY k), '{}') INTO columns
                    FROM jsonb_object_keys((SELECT to_jsonb(t) - '\(ServerNames.objectID)' - '\(ServerNames.version)' FROM new_rows t LIMIT 1)) AS k;
                    INSERT INTO \(log) (entity, object, op, version, changed, "row", push)
                    SELECT TG_TABLE_NAME, t.\(id), 'insert', t.\(version), columns, to_jsonb(t) - '\(ServerNames.objectID)' - '\(ServerNames.version)', push
                    FROM new_rows t;
                ELSE
                    INSERT INTO \(log) (entity, object, op, version, changed, "row", push)
                    SELECT TG_TABLE_NAME, n.id, 'update', n.version,
                           coalesce((SELECT array_agg(e.key ORDER BY e.key) FROM jsonb_each(n.r) AS e
                                     WHERE e.value IS DISTINCT FROM o.r -> e.key), '{}'), n.r, push
                    FROM (SELECT t.\(id) AS id, t.\(version) AS version,
                                 to_jsonb(t) - '\(ServerNames.objectID)' - '\(ServerNames.version)' AS r FROM new_rows t OFFSET 0) n
                    JOIN (SELECT t.\(id) AS id, to_jsonb(t) AS r FROM old_rows t OFFSET 0) o ON o.id = n.id;
                END IF;
                RETURN NULL;
            END
            $$
            """,
            // Before a statement inserts into a table whose log trigger runs once a
            // statement: what the version trigger gives its rows (see above), for this table.
            """
            CREATE OR REPLACE FUNCTION \(ServerNames.quoted(ServerNames.insertFloor))() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
            BEGIN
                PERFORM set_config('\(ServerNames.insertFloorSetting)', TG_RELID::text || ':'
                    || \(forgottenFloor)::text || ':'
                    || (EXISTS (SELECT 1 FROM \(deleted)))::text, true);
                RETURN NULL;
            END
            $$
            """,
            // A wake-up without data: notifications of one transaction with the same
            // (empty) payload are folded into one, sent at commit.
            """
            CREATE OR REPLACE FUNCTION \(ServerNames.quoted(ServerNames.wakeUp))() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('\(ServerNames.channel)', '');
                RETURN NULL;
            END
            $$
            """,
            // Run as the owner: no other role may attach it to a table of its own. (A trigger
            // that fires is not checked again.)
            "REVOKE EXECUTE ON FUNCTION \(ServerNames.quoted(ServerNames.recordChange))() FROM PUBLIC",
            "REVOKE EXECUTE ON FUNCTION \(ServerNames.quoted(ServerNames.recordChanges))() FROM PUBLIC",
            "REVOKE EXECUTE ON FUNCTION \(ServerNames.quoted(ServerNames.nextVersion))() FROM PUBLIC",
            "REVOKE EXECUTE ON FUNCTION \(ServerNames.quoted(ServerNames.insertFloor))() FROM PUBLIC",
        ]
    }
}
