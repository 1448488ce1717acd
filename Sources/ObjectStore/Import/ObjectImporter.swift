import Dispatch
import Foundation
import GRDB
import Synchronization

/// Imports the records of a CSV or JSON lines file into one entity of a store: streaming,
/// in chunks of one transaction each, cancellable, and resumable where it stopped.
///
/// ```swift
/// let importer = try ObjectImporter(store: store, entityName: "Team", file: url)
/// DispatchQueue.global().async {
///     let result = try importer.run { progress in print(progress.fractionCompleted) }
/// }
/// // later, from anywhere: importer.cancel()
/// ```
///
/// Each record becomes an inserted object of a private background ``ObjectContext``, with
/// the attributes' defaults for the properties the record leaves out, and is validated
/// like a save would before it joins the current chunk. Every `chunkSize` records (fewer
/// in the first chunks when `firstChunkSize` asks for it) the chunk is saved in one SQLite
/// transaction, so other contexts of the same store merge it as it commits: a list shows the
/// new rows chunk by chunk.
///
/// The store keeps a journal of the import (table `Z_IMPORT`, keyed by the file's path and
/// the entity) written in the same transaction as each chunk. A run that stops (a bad
/// record, ``cancel()``, a crash, a killed process) leaves every committed chunk in place,
/// and running the same import again resumes after the last committed record, provided the
/// part of the file already imported did not change. An import is resumed, never rolled
/// back as one unit. See `Docs/Importing.md`.
///
/// ## Topics
/// ### Importing
/// - ``init(store:entityName:file:format:chunkSize:firstChunkSize:restart:)``
/// - ``run(progress:)``
/// - ``cancel()``
/// ### Results
/// - ``ImportProgress``
/// - ``ImportResult``
/// - ``ImportError``
/// - ``ImportFormat``
public final class ObjectImporter: @unchecked Sendable {
    /// The store the records go to.
    public let store: PersistentStore
    /// The entity each record becomes an object of.
    public let entityName: String
    /// The file read.
    public let file: URL
    /// The file's format.
    public let format: ImportFormat
    /// How many records each transaction commits.
    public let chunkSize: Int
    /// How many records the first transaction commits: each next one commits half as many
    /// again, up to ``chunkSize``.
    public let firstChunkSize: Int
    /// Whether the import starts at the top of the file whatever its journal says.
    public let restart: Bool

    private let entity: EntityDescription
    private let journal: ImportJournal
    /// The entity and its key attribute when a to-one relationship points back to it, so
    /// that a record can refer to an earlier record of the same chunk.
    private let ownKey: (entity: String, keyAttribute: String)?
    /// The queue of the importer's contexts.
    private let queue = DispatchQueue(label: "ObjectImporter")
    private let isCancelled = Atomic<Bool>(false)

    /// Prepares an import of `file` into the entity `entityName` of `store`, and checks what
    /// can be checked before anything is imported: the entity, the file, its format and its
    /// CSV header.
    ///
    /// - Parameters:
    ///   - store: The store the records are saved into, in a context of the import's own.
    ///   - entityName: The entity each record becomes an object of.
    ///   - file: The CSV or JSON-lines file.
    ///   - format: The file's format; from its extension when nil (see
    ///     ``ImportFormat/init(fileExtension:)``).
    ///   - chunkSize: The records committed by each transaction (at least 1).
    ///   - firstChunkSize: The records committed by the first transaction, when fewer than
    ///     `chunkSize` (at least 1): each next chunk is half as large again, up to `chunkSize`.
    ///     A list that shows the import then gets its first rows sooner, and a few at a time
    ///     while most of them still land among the rows on screen. `chunkSize` when nil.
    ///   - restart: Start at the top of the file even when the journal says an earlier
    ///     import of it stopped half-way or finished. Rows already imported stay.
    /// - Throws: ``ImportError`` (kind ``ImportError/Kind/unreadableFile`` or
    ///   ``ImportError/Kind/badHeader``), or ``ModelError`` when the model has no such entity.
    public init(
        store: PersistentStore, entityName: String, file: URL, format: ImportFormat? = nil,
        chunkSize: Int = 1000, firstChunkSize: Int? = nil, restart: Bool = false
    ) throws {
        precondition(chunkSize > 0, "an import's chunkSize must be at least 1")
        precondition(firstChunkSize.map { $0 > 0 } ?? true, "an import's firstChunkSize must be at least 1")
        self.store = store
        self.entityName = entityName
        self.file = file
        self.chunkSize = chunkSize
        self.firstChunkSize = min(firstChunkSize ?? chunkSize, chunkSize)
        self.restart = restart
        entity = try store.model.existingEntity(named: entityName)
        journal = ImportJournal(file: file, entityName: entityName)
        let entity = entity
        ownKey = entity.relationships.contains { $0.destinationEntity == entity.name && !$0.isToMany }
            ? entity.attributes.first { $0.type == .string }.map { (entity.name, $0.name) } : nil
        guard let format = format ?? ImportFormat(fileExtension: file.pathExtension) else {
            throw ImportError(.unreadableFile, file: file,
                              "cannot tell the format from the file's extension ('\(file.pathExtension)'); name it .csv, .jsonl, .ndjson or .json, or give the format (csv or JSON lines)")
        }
        self.format = format
        _ = try RecordConverter(entity: entity, model: store.model, file: file, columns: format.makeReader(for: file).columns)
    }

    /// Stops a running import after its current record: what it read is committed with the
    /// journal, and ``run(progress:)`` returns ``ImportResult/Outcome/cancelled``. Safe from
    /// any thread; a run started after this returns at once.
    public func cancel() {
        isCancelled.store(true, ordering: .relaxed)
    }

    /// Imports the file, blocking until it is done, cancelled or stopped: call it off the
    /// main thread.
    ///
    /// Resumes an import of the same file and entity that stopped earlier, after its last
    /// committed record, when the file's bytes up to there are unchanged.
    ///
    /// - Parameter progress: Called after each chunk commits, on the thread that called `run`.
    /// - Returns: How the run ended and how many records it committed.
    /// - Throws: ``ImportError``: a bad record (after committing the records before it),
    ///   an import that finished already or whose imported part of the file changed (both
    ///   before anything is imported), a file that cannot be read, a chunk that cannot be
    ///   committed.
    public func run(progress: @escaping @Sendable (ImportProgress) -> Void = { _ in }) throws -> ImportResult {
        let reader = try format.makeReader(for: file)
        let converter = try RecordConverter(entity: entity, model: store.model, file: file, columns: reader.columns)
        let totalBytes = ((try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber)?.int64Value ?? 0
        let previous = try store.database.write { db in
            try ImportJournal.createTable(db)
            return try journal.entry(db)
        }
        var committed: ImportJournal.Entry
        var expectation: ImportJournal.Expectation
        var resumedAtLine: Int?
        // A finished import of nothing (an empty file, a header alone) protects no record from
        // a second import: start over, as for a new file.
        if let previous, !restart, !(previous.finished && previous.records == 0) {
            try checkResumable(previous, input: reader.input)
            committed = previous
            expectation = .entry(previous)
            resumedAtLine = previous.line + 1
        } else {
            let start = reader.input.position
            committed = ImportJournal.Entry(line: start.line, byteOffset: start.offset, records: 0, checksum: start.checksum, finished: false)
            expectation = previous == nil ? .absent : .any
        }
        let recordsBefore = committed.records
        var size = firstChunkSize
        while true {
            let end = try queue.sync {
                try importChunk(size, from: reader, converter: converter, after: &committed, expecting: &expectation)
            }
            size = min(chunkSize, size + (size + 1) / 2)
            progress(ImportProgress(line: committed.line, recordsImported: committed.records,
                                    bytesRead: committed.byteOffset, totalBytes: totalBytes))
            let outcome: ImportResult.Outcome
            switch end {
            case .full: continue
            case .endOfFile: outcome = .finished
            case .cancelled: outcome = .cancelled
            case .failed(let error): throw error
            }
            return ImportResult(outcome: outcome, recordsImported: committed.records - recordsBefore,
                                totalRecordsImported: committed.records, resumedAtLine: resumedAtLine, nextLine: committed.line + 1)
        }
    }

    /// Refuses to resume from `entry` unless the file's first bytes are the ones imported, or
    /// when they are all it holds and the import finished; otherwise leaves `input` where the
    /// import stopped. A finished import of a file that has grown since (records appended, or
    /// an empty file filled) goes on with the new records.
    private func checkResumable(_ entry: ImportJournal.Entry, input: ByteInput) throws {
        let expected = ByteInput.Position(offset: entry.byteOffset, line: entry.line, checksum: entry.checksum)
        guard try input.skip(to: entry.byteOffset), input.position == expected else {
            throw ImportError(.fileChanged, file: file,
                              "its first \(entry.line) lines changed since an import of them into \(entityName) \(entry.finished ? "finished" : "stopped") (\(entry.records) records were imported), so it cannot resume after them. To import the whole file again, start over with restart (--restart); the rows already imported stay, delete them first if the file replaces them")
        }
        if entry.finished, try input.peek() == nil {
            throw ImportError(.alreadyImported, file: file,
                              "already imported into \(entityName) completely (\(entry.records) records); importing it again would add every record a second time. To do that anyway, start over with restart (--restart)")
        }
    }

    /// How a chunk ended.
    private enum ChunkEnd {
        /// A whole chunk was committed; more may follow.
        case full
        case endOfFile
        case cancelled
        /// A record could not be imported; the records before it were committed.
        case failed(Error)

        var isEndOfFile: Bool {
            if case .endOfFile = self { return true }
            return false
        }
    }

    /// Reads, inserts and validates up to `size` records, then commits them with the journal
    /// in one transaction. Runs on ``queue``.
    private func importChunk(
        _ size: Int, from reader: any RecordReader, converter: RecordConverter,
        after committed: inout ImportJournal.Entry, expecting expectation: inout ImportJournal.Expectation
    ) throws -> ChunkEnd {
        // A context per chunk: a context keeps every object it saved, and an import must not.
        let context = ObjectContext(store: store, queue: queue)
        context.automaticallyMergesChangesFromStore = false
        let finder = RelatedObjectFinder(context: context, imported: ownKey)
        var end = ChunkEnd.full
        var position = reader.input.position
        let firstLine = position.line + 1
        var count = 0
        while count < size {
            do {
                if isCancelled.load(ordering: .relaxed), try reader.input.peek() != nil {
                    end = .cancelled
                    break
                }
                guard let record = try reader.next() else {
                    end = .endOfFile
                    position = reader.input.position
                    break
                }
                try insert(record, converter: converter, into: context, finder: finder)
            } catch {
                end = .failed(error)
                break
            }
            count += 1
            position = reader.input.position
        }
        let entry = ImportJournal.Entry(line: position.line, byteOffset: position.offset, records: committed.records + count,
                                        checksum: position.checksum, finished: end.isEndOfFile)
        if case .failed(let error) = end, context.insertedObjects.count != count {
            throw error  // the bad record could not be taken out again: commit nothing of the chunk
        }
        let journal = self.journal, expected = expectation
        let lines = count == 0 ? "how far it got" : "lines \(firstLine)–\(position.line)"
        do {
            try context.save(writingAlso: { db in try journal.write(entry, expecting: expected, db) })
        } catch is ImportJournal.Conflict {
            throw ImportError(.saveFailed, file: file,
                              "another import of this file into \(entityName) committed while this one ran, so this one stopped without committing \(lines); run the import again once the other one ends")
        } catch {
            throw ImportError(.saveFailed, file: file,
                              "cannot commit \(lines) (\(error)); nothing of that was written; run the import again to retry")
        }
        committed = entry
        expectation = .entry(entry)
        return end
    }

    /// Inserts one record and validates it; a record that does not fit is removed again and
    /// reported.
    private func insert(_ record: RawRecord, converter: RecordConverter, into context: ObjectContext, finder: RelatedObjectFinder) throws {
        let values = try converter.convert(record)
        let object = try context.insert(entityName: entityName)
        do {
            for (target, value) in values {
                switch target {
                case .attribute(let attribute):
                    try context.setAttribute(value, of: object, key: attribute.name)
                case .toOne(let relationship, let keyAttribute):
                    var destination: ManagedObject?
                    if !value.isNull {
                        do {
                            destination = try finder.destination(of: relationship, keyAttribute: keyAttribute.name, value: value)
                        } catch let problem as RelatedObjectFinder.Problem {
                            throw ImportError.badRecord(file, line: record.line, field: relationship.name, problem.message)
                        }
                    }
                    try context.setRelatedObject(destination, of: object, relationship: relationship)
                }
            }
            let failures = try context.validationFailures(of: object)
            if let first = failures.first {
                let others = failures.dropFirst().map { "\($0.key ?? entityName): \($0.message)" }
                throw ImportError.badRecord(file, line: record.line, field: first.key,
                                            first.message + (others.isEmpty ? "" : " (and \(others.joined(separator: "; ")))"))
            }
        } catch {
            try context.delete(object)
            throw error
        }
        finder.didInsert(object)
    }
}
