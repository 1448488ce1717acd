import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program started with `posix_spawn`, its standard input, output and error on pipes, read
/// by plain threads.
///
/// For tests that kill their children at random moments: Foundation's `Process` with
/// `readabilityHandler` crashed the test process inside libdispatch (signal 11 in
/// `_dispatch_event_loop_drain`) while killed children were being reaped.
public final class ChildProcess: @unchecked Sendable {
    /// The child's process ID.
    public let processIdentifier: pid_t
    private let condition = NSCondition()
    private var input: Int32
    private var exitStatus: Int32?

    /// Starts `executable` with `arguments`. `output` and `errors` get each chunk the child
    /// writes, then an empty `Data` at the end of the stream; they are called on reader threads.
    public init(_ executable: URL, _ arguments: [String],
                output: @escaping @Sendable (Data) -> Void, errors: @escaping @Sendable (Data) -> Void) throws {
        // One spawn at a time: a pipe made by one start must not leak into a child another
        // thread spawns before its ends are marked close-on-exec (pipe2 is not visible here).
        Self.spawning.lock()
        defer { Self.spawning.unlock() }
        var pipes: [[Int32]] = []
        for _ in 0..<3 {
            var ends: [Int32] = [-1, -1]
            let made = pipe(&ends) == 0
            guard made, fcntl(ends[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(ends[1], F_SETFD, FD_CLOEXEC) == 0 else {
                let error = errno
                (pipes.flatMap { $0 } + (made ? ends : [])).forEach { _ = close($0) }
                throw POSIXError(POSIXErrorCode(rawValue: error) ?? .EIO)
            }
            pipes.append(ends)
        }
        // The child's ends become 0, 1 and 2 (dup2 clears close-on-exec); every other end
        // closes at exec.
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipes[0][0], 0)
        posix_spawn_file_actions_adddup2(&actions, pipes[1][1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipes[2][1], 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, environ)
        _ = close(pipes[0][0]); _ = close(pipes[1][1]); _ = close(pipes[2][1])
        guard spawned == 0 else {
            _ = close(pipes[0][1]); _ = close(pipes[1][0]); _ = close(pipes[2][0])
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO)
        }
        processIdentifier = pid
        input = pipes[0][1]
        Self.startReading(pipes[1][0], output)
        Self.startReading(pipes[2][0], errors)
        Thread { [self] in waitForExit() }.start()
    }

    private static let spawning = NSLock()

    private static func startReading(_ descriptor: Int32, _ handler: @escaping @Sendable (Data) -> Void) {
        Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 { handler(Data(buffer[0..<count])); continue }
                if count < 0 && errno == EINTR { continue }
                break
            }
            _ = close(descriptor)
            handler(Data())
        }.start()
    }

    /// Waits for the child to end without reaping it, then reaps it under the lock: `kill`
    /// never signals a process ID the system may have given to another process.
    private func waitForExit() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        condition.withLock {
            var status: Int32 = 0
            while waitpid(processIdentifier, &status, 0) == -1 && errno == EINTR {}
            exitStatus = status
            condition.broadcast()
        }
    }

    /// Whether the child has not ended yet.
    public var isRunning: Bool { condition.withLock { exitStatus == nil } }

    /// Sends `signal` to the child if it is still running; returns whether it was.
    @discardableResult
    public func kill(_ signal: Int32 = SIGKILL) -> Bool {
        condition.withLock {
            guard exitStatus == nil else { return false }
            return Glibc.kill(processIdentifier, signal) == 0
        }
    }

    /// Writes `data` to the child's standard input; throws when the child has closed it
    /// (ignore SIGPIPE first) or the input was closed. Not at the same time as
    /// ``closeInput()``: the descriptor is written outside the lock.
    public func write(_ data: Data) throws {
        let descriptor = condition.withLock { input }
        guard descriptor >= 0 else { throw POSIXError(.EBADF) }
        try data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                offset += written
            }
        }
    }

    /// Closes the child's standard input (end of file for the child).
    public func closeInput() {
        condition.withLock {
            if input >= 0 { _ = close(input); input = -1 }
        }
    }

    /// Waits for the child to end; returns its wait status.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        condition.withLock {
            while exitStatus == nil { condition.wait() }
            return exitStatus!
        }
    }

    deinit { if input >= 0 { _ = close(input) } }
}
