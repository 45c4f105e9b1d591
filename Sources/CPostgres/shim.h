// libpq's declarations only: nothing links libpq. The Storage module opens libpq.so.5 with
// dlopen the first time a PostgreSQL connection string is read (LibPQ.swift), so a bridge on
// SQLite never maps it, nor the Kerberos, LDAP and TLS libraries it brings along.
#include <postgresql/libpq-fe.h>

// The type of each function the Storage module calls, for dlsym's result (`typeof` does not
// reference the symbol).
typedef __typeof__(&PQconnectdbParams) aabridge_PQconnectdbParams;
typedef __typeof__(&PQstatus) aabridge_PQstatus;
typedef __typeof__(&PQsetNoticeProcessor) aabridge_PQsetNoticeProcessor;
typedef __typeof__(&PQreset) aabridge_PQreset;
typedef __typeof__(&PQconninfo) aabridge_PQconninfo;
typedef __typeof__(&PQconninfoFree) aabridge_PQconninfoFree;
typedef __typeof__(&PQconninfoParse) aabridge_PQconninfoParse;
typedef __typeof__(&PQtransactionStatus) aabridge_PQtransactionStatus;
typedef __typeof__(&PQexec) aabridge_PQexec;
typedef __typeof__(&PQexecParams) aabridge_PQexecParams;
typedef __typeof__(&PQclear) aabridge_PQclear;
typedef __typeof__(&PQntuples) aabridge_PQntuples;
typedef __typeof__(&PQconsumeInput) aabridge_PQconsumeInput;
typedef __typeof__(&PQnotifies) aabridge_PQnotifies;
typedef __typeof__(&PQfreemem) aabridge_PQfreemem;
typedef __typeof__(&PQsocket) aabridge_PQsocket;
typedef __typeof__(&PQfinish) aabridge_PQfinish;
typedef __typeof__(&PQresultStatus) aabridge_PQresultStatus;
typedef __typeof__(&PQresultErrorField) aabridge_PQresultErrorField;
typedef __typeof__(&PQerrorMessage) aabridge_PQerrorMessage;
typedef __typeof__(&PQgetisnull) aabridge_PQgetisnull;
typedef __typeof__(&PQgetvalue) aabridge_PQgetvalue;
typedef __typeof__(&PQgetlength) aabridge_PQgetlength;
