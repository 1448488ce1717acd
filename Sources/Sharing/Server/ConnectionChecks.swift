import Logging
import NIOSSL
import PostgresNIO

extension ServerConfiguration {
    /// The refusal `error`, thrown while connecting to this server, stands for, with a message
    /// that says what to change; nil for an error that trying again may mend (the server
    /// unreachable, restarting).
    func refusal(_ error: any Error) -> SharingError? {
        if let error = error as? SharingError { return error.isRefusal ? error : nil }
        guard let error = error as? PSQLError else { return nil }
        switch error.code {
        case .sslUnsupported:
            return .insecureConnection(server: description, reason: "the server does not offer TLS, and sslmode=\(sslMode.rawValue) requires it: turn ssl on in the server's postgresql.conf, or use sslmode=prefer")
        case .authMechanismRequiresPassword:
            return .authenticationFailed(server: description, reason: "it asks for \(username)'s password and none was given: put it in PGPASSWORD, in ~/.pgpass or in the URL")
        case .server:
            // 28000: invalid_authorization_specification (no pg_hba.conf line, a role that
            // may not log in); 28P01: invalid_password.
            guard let state = error.serverInfo?[.sqlState], state.hasPrefix("28") else { return nil }
            let message = error.serverInfo?[.message] ?? "authentication failed"
            let hint = state == "28P01" ? "check \(username)'s password (PGPASSWORD, ~/.pgpass or the URL)" : "ask the server's administrator to let \(username) connect"
            return .authenticationFailed(server: description, reason: "\(message); \(hint)")
        default:
            return error.underlying.flatMap(tlsRefusal)
        }
    }

    /// What a TLS handshake's error says of the server's certificate, when it says something.
    private func tlsRefusal(_ error: any Error) -> SharingError? {
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return .insecureConnection(server: description, reason: "the server's certificate is made out to another host than \(host) (sslmode=verify-full): connect by the name on its certificate, or use sslmode=verify-ca")
        }
        if let error = error as? NIOSSLError, case .handshakeFailed(let ssl) = error, "\(ssl)".contains("CERTIFICATE_VERIFY_FAILED") {
            let authorities = sslRootCertificate ?? "~/.postgresql/root.crt"
            return .insecureConnection(server: description, reason: "the server's certificate is not signed by a certificate authority of \(authorities) (sslmode=\(sslMode.rawValue)): give the authority that signed it as sslrootcert")
        }
        return nil
    }
}

/// The server's error behind `error`: a `PSQLError` the server sent, also when a transaction
/// wrapped it (`PostgresTransactionError`); nil for any other error.
func serverError(_ error: any Error) -> (sqlState: String, message: String)? {
    if let error = error as? PostgresTransactionError {
        return [error.closureError, error.beginError, error.commitError].lazy.compactMap { $0.flatMap(serverError) }.first
    }
    guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return nil }
    return (state, error.serverInfo?[.message] ?? "error \(state)")
}

extension SharingStatus.Security {
    /// How `connection` is secured: whether the server encrypts it (`pg_stat_ssl`, which a
    /// role reads for its own connections), and what `mode` checked of its certificate.
    init(of connection: PostgresConnection, configuration: ServerConfiguration, logger: Logger) async throws {
        let rows = try await connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger)
        var encrypted = false
        for try await ssl in rows.decode(Bool.self) { encrypted = ssl }
        switch (encrypted, configuration.sslMode) {
        case (false, _): self = .plain
        case (true, .verifyFull): self = .verifiedHost
        case (true, _): self = configuration.checksAuthority ? .verifiedAuthority : .encrypted
        }
    }
}
