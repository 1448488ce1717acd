import ObjectStore

/// The names the server schema uses beside the model's own, in one place: the change log,
/// the columns every entity table has, the trigger functions and the wake-up channel.
///
/// They start with `Z_`, as the local store's own tables and columns do: a model refuses
/// entity and property names with that prefix, so none is mistaken for them.
enum ServerNames {
    /// The change log: one row per inserted, updated or deleted row of an entity table.
    static let changeLog = "Z_CHANGES"
    /// The server's own facts: its identity and how far its log was pruned.
    static let state = "Z_SHARING"
    /// The identities of the pushes that added to counters: a push sent again (its end not
    /// recorded in the store, the process killed) finds its own and adds nothing twice.
    static let pushes = "Z_PUSHES"
    /// The last version of each deleted object (the version of its delete): an object
    /// inserted again under its global ID goes on from there, so that a desktop holding its
    /// delete takes the new row instead of skipping it as older.
    static let deleted = "Z_DELETED"
    /// The setting a push that adds to counters sets for its transaction to its identity,
    /// which the change log records with each change it writes.
    static let pushSetting = "fetched_results.push"
    /// The global ID of an object: the primary key of every entity table.
    static let objectID = "Z_ID"
    /// How many times an object's row was written: raised by a trigger on every update, so
    /// that changes of one object can be put in commit order (see ``ServerChange/version``).
    static let version = "Z_VERSION"
    /// The function of the row trigger that records a change in the change log.
    static let recordChange = "Z_record_change"
    /// The function of the statement triggers that record a statement's changes in the
    /// change log at once, for entities without an ownership.
    static let recordChanges = "Z_record_changes"
    /// The function of the row trigger that raises the version and drops no-op updates.
    static let nextVersion = "Z_next_version"
    /// The function of the statement trigger that reads, once before a statement inserts,
    /// what every inserted row's version starts above (see ``insertFloorSetting``).
    static let insertFloor = "Z_insert_floor"
    /// The setting in which ``insertFloor`` leaves, for the rest of its statement, the
    /// table it read for, the highest version of a delete forgotten and whether any delete
    /// is remembered: `OID:FLOOR:BOOL`. The version trigger takes it instead of querying
    /// two tables a row; the statement's log trigger checks the versions it gave.
    static let insertFloorSetting = "fetched_results.insert_floor"
    /// The key in ``state`` of the highest version of a delete forgotten, above which
    /// every later insert's version starts.
    static let deletedFloorKey = "deletedFloor"
    /// The function of the statement trigger that wakes listeners up.
    static let wakeUp = "Z_wake_up"
    /// Row-level security (see ``RowSecurity``): the function that finds who sees an
    /// object, the two that log who stopped and started seeing one, the trigger function
    /// that keeps an owned row's owner, the policy of an entity table and the change log's.
    static let visibleTo = "Z_visible_to"
    static let hide = "Z_hide"
    static let refollow = "Z_refollow"
    static let keepOwner = "Z_keep_owner"
    static let rowPolicy = "Z_visible"
    static let logPolicy = "Z_readers"
    /// The channel of the wake-up notifications: they carry no payload, only the news that
    /// the change log grew.
    static let channel = "fetched_results_changes"

    /// `name` as a PostgreSQL identifier, in double quotes.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

extension AttributeType {
    /// The server column type of this attribute type. Dates are stored as the local store
    /// stores them (seconds since 2001-01-01, a `double precision`) so that they round-trip
    /// exactly; `to_timestamp("column" + 978307200)` reads one as a timestamp.
    var serverType: String {
        switch self {
        case .string: return "text"
        case .integer: return "bigint"
        case .double, .date: return "double precision"
        case .bool: return "boolean"
        case .binary: return "bytea"
        }
    }
}
