//! Typed constructors and accessors for the Python objects LangGraph stores as msgpack
//! extensions: UUIDs, datetimes, dates, times, timedeltas, decimals, sets, enums,
//! dataclasses, pydantic models (LangChain messages), `Send` and `Interrupt`.
