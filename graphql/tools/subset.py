"""Regenerates graphql/storefront.subset.graphql from the full Storefront SDL.

Keeps, verbatim from the real schema, only the types and fields the operations in graphql/
select (plus every argument type of those fields), so graphql_client's derive parses a small
file. Input objects keep only the optional fields the bridge sends. Run after editing an
operation:  python3 graphql/tools/subset.py ../shared/upstream/shopify/storefront.schema.graphql
"""
import sys
from pathlib import Path

from graphql import (GraphQLNonNull, GraphQLList, GraphQLArgument, GraphQLField, GraphQLInputField, GraphQLDirective, specified_directives, GraphQLEnumType, GraphQLInputObjectType, GraphQLInterfaceType,
                     GraphQLObjectType, GraphQLScalarType, GraphQLSchema, GraphQLUnionType,
                     TypeInfo, TypeInfoVisitor, Visitor, build_schema, get_named_type,
                     is_input_object_type, parse, print_schema, validate, visit)

HERE = Path(__file__).resolve().parent.parent
# Optional input fields the bridge never sends are left out of the generated structs.
INPUT_KEEP = {
    "CartInput": {"lines", "attributes", "buyerIdentity"},
    "CartBuyerIdentityInput": {"countryCode", "email", "phone"},
    "CartSelectableAddressInput": {"address", "selected", "oneTimeUse"},
    "CartAddressInput": {"deliveryAddress"},
    "CartLineInput": {"merchandiseId", "quantity"},
    "CartLineUpdateInput": {"id", "quantity", "merchandiseId"},
    "ProductFilter": {"price", "available", "category"},
}

full = build_schema(Path(sys.argv[1]).read_text())
used = {}  # type name -> set of fields
abstract_members = {}  # abstract type -> concrete types named in inline fragments
documents = []
for path in sorted(HERE.glob("*.graphql")):
    if path.name.startswith("storefront"):
        continue
    doc = parse(path.read_text())
    errors = validate(full, doc)
    if errors:
        sys.exit(f"{path.name}: {errors}")
    documents.append(doc)
    info = TypeInfo(full)

    class Collect(Visitor):
        def enter_field(self, node, *_):
            parent = info.get_parent_type()
            if parent is not None:
                used.setdefault(parent.name, set()).add(node.name.value)

        def enter_inline_fragment(self, node, *_):
            parent = info.get_parent_type()
            if node.type_condition is not None and parent is not None:
                abstract_members.setdefault(parent.name, set()).add(node.type_condition.name.value)

    visit(doc, TypeInfoVisitor(info, Collect()))
    for op in doc.definitions:
        for var in getattr(op, "variable_definitions", None) or []:
            name = var.type
            while hasattr(name, "type"):
                name = name.type
            used.setdefault(name.name.value, set())

used.pop("__typename", None)
for fields in used.values():
    fields.discard("__typename")
# Fields selected through an interface must exist on the implementations kept.
for abstract, members in abstract_members.items():
    t = full.type_map[abstract]
    if isinstance(t, GraphQLInterfaceType):
        for m in sorted(members):
            used.setdefault(m, set()).update(used.get(abstract, set()))
if "BaseCartLine" in used:
    for impl in ("CartLine", "ComponentizableCartLine"):
        used.setdefault(impl, set()).update(used["BaseCartLine"])
        abstract_members.setdefault("BaseCartLine", set()).add(impl)

keep = {}


def need(t):
    t = get_named_type(t)
    if t.name in keep or t.name.startswith("__"):
        return
    if isinstance(t, GraphQLScalarType):
        keep[t.name] = t
        return
    if isinstance(t, GraphQLEnumType):
        keep[t.name] = t
        return
    if is_input_object_type(t):
        allow = INPUT_KEEP.get(t.name)
        fields = {k: v for k, v in t.fields.items() if allow is None or k in allow or str(v.type).endswith("!")}
        keep[t.name] = None
        for f in fields.values():
            need(f.type)
        keep[t.name] = GraphQLInputObjectType(t.name, fields, description=t.description)
        return
    keep[t.name] = None
    if isinstance(t, GraphQLUnionType):
        members = [m for m in t.types if m.name in abstract_members.get(t.name, set())]
        for m in sorted(members):
            need(m)
        keep[t.name] = ("union", t, members)
        return
    names = used.get(t.name, set())
    if isinstance(t, GraphQLInterfaceType) and "id" in t.fields:
        names = names | {"id"}
    for n in sorted(names):
        f = t.fields[n]
        need(f.type)
        for a in f.args.values():
            need(a.type)
    keep[t.name] = ("fields", t, names)


need(full.query_type)
need(full.mutation_type)
IN_CONTEXT = full.get_directive("inContext")
for a in IN_CONTEXT.args.values():
    need(a.type)
# Interfaces whose implementations appear in inline fragments.
for abstract in list(abstract_members):
    need(full.type_map[abstract])
    # An interface's implementations named in inline fragments are reachable only through it
    # (BaseCartLine's are kept out: a `Node` selection would then have to name cart lines).
    if isinstance(full.type_map[abstract], GraphQLInterfaceType) and abstract != "BaseCartLine":
        for member in sorted(abstract_members[abstract]):
            need(full.type_map[member])

built = {}


def remap(t):
    if isinstance(t, GraphQLNonNull):
        return GraphQLNonNull(remap(t.of_type))
    if isinstance(t, GraphQLList):
        return GraphQLList(remap(t.of_type))
    return make(t.name)


def arg(a):
    return GraphQLArgument(remap(a.type), default_value=a.default_value, description=a.description,
                           deprecation_reason=a.deprecation_reason)


def field(f):
    return GraphQLField(remap(f.type), args={k: arg(v) for k, v in f.args.items()},
                        description=f.description, deprecation_reason=f.deprecation_reason)


def make(name):
    if name in built:
        return built[name]
    entry = keep[name]
    if isinstance(entry, (GraphQLScalarType, GraphQLEnumType)):
        built[name] = entry
        return entry
    if isinstance(entry, GraphQLInputObjectType):
        obj = GraphQLInputObjectType(name, lambda e=entry: {
            k: GraphQLInputField(remap(v.type), default_value=v.default_value, description=v.description,
                                 deprecation_reason=v.deprecation_reason)
            for k, v in e.fields.items()}, description=entry.description)
        built[name] = obj
        return obj
    kind, t, rest = entry
    if kind == "union":
        u = GraphQLUnionType(name, lambda: [make(m.name) for m in rest], description=t.description)
        built[name] = u
        return u
    fields = lambda t=t, rest=rest: {n: field(t.fields[n]) for n in sorted(rest)}
    if isinstance(t, GraphQLInterfaceType):
        obj = GraphQLInterfaceType(name, fields, description=t.description,
                                   interfaces=lambda t=t: [make(i.name) for i in t.interfaces if i.name in keep])
    else:
        def interfaces(t=t):
            out = []
            for i in t.interfaces:
                if i.name in keep and name in abstract_members.get(i.name, set()) | {"Product", "ProductVariant", "CartLine", "ComponentizableCartLine"}:
                    out.append(make(i.name))
            return out
        obj = GraphQLObjectType(name, fields, description=t.description, interfaces=interfaces)
    built[name] = obj
    return obj


for n in list(keep):
    make(n)
in_context = GraphQLDirective(IN_CONTEXT.name, IN_CONTEXT.locations,
                              {k: arg(v) for k, v in IN_CONTEXT.args.items()},
                              IN_CONTEXT.is_repeatable, IN_CONTEXT.description)

schema = GraphQLSchema(query=built["QueryRoot"], mutation=built["Mutation"],
                       types=list(built.values()), directives=list(specified_directives) + [in_context])
text = ("# GENERATED by graphql/tools/subset.py from the real Storefront API 2026-04 schema:\n"
        "# the types and fields the operations in graphql/ use, copied verbatim. Do not edit.\n\n"
        + print_schema(schema) + "\n")
out = HERE / "storefront.subset.graphql"
out.write_text(text)
sub = build_schema(text)
for doc in documents:
    errors = validate(sub, doc)
    if errors:
        sys.exit(f"subset rejects an operation: {errors}")
print(f"{out.name}: {len(sub.type_map)} types, {len(text)} bytes")
