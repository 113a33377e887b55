import Foundation
import PostgresNIO

/// Plain record structs (the catalog's `Codable` records) to and from PostgreSQL rows, column
/// by column, under the same column names as in SQLite: what lets one record type serve both
/// stores, and `catalog copy` move rows without listing their columns.
public enum PostgresRowCoding {
    /// A record's stored properties as columns and bound values, in declaration order. A nil
    /// optional is left out (its column takes its default, NULL).
    public static func columns<Record: Encodable>(of record: Record, naming: @escaping @Sendable (String) -> String) throws -> (names: [String], binds: PostgresBindings) {
        let encoder = ColumnEncoder(naming: naming)
        try record.encode(to: encoder)
        return (encoder.storage.names, encoder.storage.binds)
    }

    /// An `INSERT INTO table (...) VALUES (...)` of a record, with `suffix` (say, `RETURNING id`).
    public static func insert<Record: Encodable>(_ record: Record, into table: String, suffix: String = "",
                                                 naming: @escaping @Sendable (String) -> String) throws -> PostgresQuery {
        let (names, binds) = try columns(of: record, naming: naming)
        let placeholders = names.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        return PostgresQuery(unsafeSQL: "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(placeholders)) \(suffix)",
                             binds: binds)
    }

    /// A row that refers to another by the key the other's insert returns: `reference` is the
    /// column holding it (any value there is replaced by the returned key).
    public struct Dependent {
        let table: String
        let reference: String
        let record: any Encodable

        public init(_ record: any Encodable, into table: String, reference: String) {
            self.table = table
            self.reference = reference
            self.record = record
        }
    }

    /// What a statement inserting a record returns beside its key: `columns` from `join`, a
    /// lateral join that may use `inserted.KEY`; made with the statement's binds, to which it
    /// appends its own values.
    public struct Alongside {
        let make: (inout PostgresBindings) -> (columns: String, join: String)

        public init(_ make: @escaping (inout PostgresBindings) -> (columns: String, join: String)) {
            self.make = make
        }
    }

    /// One statement inserting `record` and the rows that refer to it (a picture with its
    /// variants and its job): one round trip where an insert each would take one apiece. It
    /// returns the record's `key`; `suffix` follows the record's values (`ON CONFLICT ... DO
    /// NOTHING`), and when the record is not inserted, neither is any dependent and no row
    /// comes back. With `alongside`, each row also holds its columns (the key first).
    public static func insert<Record: Encodable>(_ record: Record, into table: String, suffix: String = "", returning key: String,
                                                 with dependents: [Dependent], alongside: Alongside? = nil,
                                                 naming: @escaping @Sendable (String) -> String) throws -> PostgresQuery {
        let storage = ColumnStorage()
        // Each column with its placeholder, numbered in the order of the shared binds.
        func columns(_ record: any Encodable) throws -> [(name: String, placeholder: String)] {
            let first = storage.names.count
            try record.encode(to: ColumnEncoder(naming: naming, storage: storage))
            return (first..<storage.names.count).map { (storage.names[$0], "$\($0 + 1)") }
        }
        let own = try columns(record)
        var sql = "WITH inserted AS (INSERT INTO \(table) (\(own.map(\.name).joined(separator: ", "))) "
            + "VALUES (\(own.map(\.placeholder).joined(separator: ", "))) \(suffix) RETURNING \(key))"
        for (index, dependent) in dependents.enumerated() {
            let theirs = try columns(dependent.record)
            guard theirs.contains(where: { $0.name == dependent.reference }) else {
                throw EncodingError.invalidValue(dependent.record, .init(codingPath: [], debugDescription:
                    "a row of \(dependent.table) must fill \(dependent.reference), the column that refers to \(table)"))
            }
            // The reference's own bind goes unused: the key comes from the insert above.
            let values = theirs.map { $0.name == dependent.reference ? "inserted.\(key)" : $0.placeholder }
            sql += ", dependent\(index) AS (INSERT INTO \(dependent.table) (\(theirs.map(\.name).joined(separator: ", "))) "
                + "SELECT \(values.joined(separator: ", ")) FROM inserted)"
        }
        guard let alongside else { return PostgresQuery(unsafeSQL: sql + " SELECT \(key) FROM inserted", binds: storage.binds) }
        var binds = storage.binds
        let (columns, join) = alongside.make(&binds)
        return PostgresQuery(unsafeSQL: sql + " SELECT inserted.\(key), \(columns) FROM inserted \(join)", binds: binds)
    }

    /// A record decoded from a row whose columns are named as `naming` names its properties.
    public static func decode<Record: Decodable>(_ type: Record.Type, from row: PostgresRow,
                                                 naming: @escaping @Sendable (String) -> String) throws -> Record {
        try Record(from: RowDecoder(row: row.makeRandomAccess(), naming: naming))
    }
}

// MARK: Encoding

private final class ColumnStorage {
    var names: [String] = []
    var binds = PostgresBindings()
}

private struct ColumnEncoder: Encoder {
    let naming: @Sendable (String) -> String
    let storage: ColumnStorage
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    /// Columns go into `storage`, after any another record put there.
    init(naming: @escaping @Sendable (String) -> String, storage: ColumnStorage = ColumnStorage()) {
        self.naming = naming
        self.storage = storage
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Keyed<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { preconditionFailure("a record is a keyed container") }
    func singleValueContainer() -> any SingleValueEncodingContainer { preconditionFailure("a record is a keyed container") }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ColumnEncoder
        var codingPath: [any CodingKey] { [] }

        private func add(_ key: Key, _ append: (inout PostgresBindings) -> Void) {
            encoder.storage.names.append(encoder.naming(key.stringValue))
            append(&encoder.storage.binds)
        }

        mutating func encodeNil(forKey key: Key) throws { add(key) { $0.appendNull() } }
        mutating func encode(_ value: Bool, forKey key: Key) throws { add(key) { $0.append(value) } }
        mutating func encode(_ value: String, forKey key: Key) throws { add(key) { $0.append(value) } }
        mutating func encode(_ value: Double, forKey key: Key) throws { add(key) { $0.append(value) } }
        mutating func encode(_ value: Float, forKey key: Key) throws { add(key) { $0.append(Double(value)) } }
        mutating func encode(_ value: Int, forKey key: Key) throws { add(key) { $0.append(Int64(value)) } }
        mutating func encode(_ value: Int8, forKey key: Key) throws { add(key) { $0.append(Int64(value)) } }
        mutating func encode(_ value: Int16, forKey key: Key) throws { add(key) { $0.append(Int64(value)) } }
        mutating func encode(_ value: Int32, forKey key: Key) throws { add(key) { $0.append(Int64(value)) } }
        mutating func encode(_ value: Int64, forKey key: Key) throws { add(key) { $0.append(value) } }
        mutating func encode(_ value: UInt, forKey key: Key) throws { add(key) { $0.append(Int64(value)) } }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { add(key) { $0.append(Int64(value)) } }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { add(key) { $0.append(Int64(value)) } }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { add(key) { $0.append(Int64(value)) } }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { add(key) { $0.append(Int64(value)) } }

        /// A property of another type (an enum with a raw value) is stored as its single value.
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let single = SingleColumn()
            try value.encode(to: single)
            guard let append = single.append else {
                throw EncodingError.invalidValue(value, .init(codingPath: [key], debugDescription: "not a single column value"))
            }
            add(key, append)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            preconditionFailure("records have no nested containers")
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            preconditionFailure("records have no nested containers")
        }
        mutating func superEncoder() -> any Encoder { encoder }
        mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
    }
}

/// Captures the one value a raw-value enum encodes.
private final class SingleColumn: Encoder, SingleValueEncodingContainer {
    var append: ((inout PostgresBindings) -> Void)?
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> { preconditionFailure("a single value") }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { preconditionFailure("a single value") }
    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() throws { append = { $0.appendNull() } }
    func encode(_ value: Bool) throws { append = { $0.append(value) } }
    func encode(_ value: String) throws { append = { $0.append(value) } }
    func encode(_ value: Double) throws { append = { $0.append(value) } }
    func encode(_ value: Float) throws { append = { $0.append(Double(value)) } }
    func encode(_ value: Int) throws { append = { $0.append(Int64(value)) } }
    func encode(_ value: Int8) throws { append = { $0.append(Int64(value)) } }
    func encode(_ value: Int16) throws { append = { $0.append(Int64(value)) } }
    func encode(_ value: Int32) throws { append = { $0.append(Int64(value)) } }
    func encode(_ value: Int64) throws { append = { $0.append(value) } }
    func encode(_ value: UInt) throws { append = { $0.append(Int64(value)) } }
    func encode(_ value: UInt8) throws { append = { $0.append(Int64(value)) } }
    func encode(_ value: UInt16) throws { append = { $0.append(Int64(value)) } }
    func encode(_ value: UInt32) throws { append = { $0.append(Int64(value)) } }
    func encode(_ value: UInt64) throws { append = { $0.append(Int64(value)) } }
    func encode<T: Encodable>(_ value: T) throws { try value.encode(to: self) }
}

// MARK: Decoding

private struct RowDecoder: Decoder {
    let row: PostgresRandomAccessRow
    let naming: @Sendable (String) -> String
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "a row is a keyed container"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: codingPath, debugDescription: "a row is a keyed container"))
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: RowDecoder
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }

        private func cell(_ key: Key) -> PostgresCell? {
            let name = decoder.naming(key.stringValue)
            return decoder.row.contains(name) ? decoder.row[name] : nil
        }

        private func value<T: PostgresDecodable>(_ type: T.Type, _ key: Key) throws -> T {
            guard let cell = cell(key) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "no column \(decoder.naming(key.stringValue))"))
            }
            return try cell.decode(T.self)
        }

        func contains(_ key: Key) -> Bool { cell(key) != nil }
        func decodeNil(forKey key: Key) throws -> Bool { cell(key)?.bytes == nil }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(Bool.self, key) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(String.self, key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(Double.self, key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try value(Double.self, key)) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(Int.self, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { Int8(try value(Int64.self, key)) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { Int16(try value(Int64.self, key)) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { Int32(try value(Int64.self, key)) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(Int64.self, key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { UInt(try value(Int64.self, key)) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { UInt8(try value(Int64.self, key)) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { UInt16(try value(Int64.self, key)) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { UInt32(try value(Int64.self, key)) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { UInt64(try value(Int64.self, key)) }

        /// A property of another type (an enum with a raw value) is read from its one column.
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            guard let cell = cell(key) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "no column \(decoder.naming(key.stringValue))"))
            }
            return try T(from: CellDecoder(cell: cell, codingPath: [key]))
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw DecodingError.typeMismatch(type, .init(codingPath: [key], debugDescription: "records have no nested containers"))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: [key], debugDescription: "records have no nested containers"))
        }
        func superDecoder() throws -> any Decoder { decoder }
        func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
    }
}

/// One cell as a single value (for raw-value enums).
private struct CellDecoder: Decoder, SingleValueDecodingContainer {
    let cell: PostgresCell
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "a cell is a single value"))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "a cell is a single value"))
    }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { cell.bytes == nil }
    func decode(_ type: Bool.Type) throws -> Bool { try cell.decode(Bool.self) }
    func decode(_ type: String.Type) throws -> String { try cell.decode(String.self) }
    func decode(_ type: Double.Type) throws -> Double { try cell.decode(Double.self) }
    func decode(_ type: Float.Type) throws -> Float { Float(try cell.decode(Double.self)) }
    func decode(_ type: Int.Type) throws -> Int { try cell.decode(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { Int8(try cell.decode(Int64.self)) }
    func decode(_ type: Int16.Type) throws -> Int16 { Int16(try cell.decode(Int64.self)) }
    func decode(_ type: Int32.Type) throws -> Int32 { Int32(try cell.decode(Int64.self)) }
    func decode(_ type: Int64.Type) throws -> Int64 { try cell.decode(Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { UInt(try cell.decode(Int64.self)) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { UInt8(try cell.decode(Int64.self)) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { UInt16(try cell.decode(Int64.self)) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { UInt32(try cell.decode(Int64.self)) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { UInt64(try cell.decode(Int64.self)) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: self) }
}
