//! The backwards-compatibility checker (`op_spec::compat`) on TensorFlow's
//! own cases (`op_compatibility_test.cc`, whose op names the cases keep)
//! and ours: for every rule, pairs of versions that keep it and pairs that
//! break it, each breaking pair with the one violation it must give.

use op_spec::compat::{self, Rule, Subject, Violation};
use op_spec::{OpDef, OpDefBuilder};

/// An op from spec strings: `attrs`, `inputs`, `outputs`.
fn op(name: &str, attrs: &[&str], inputs: &[&str], outputs: &[&str]) -> OpDef {
    let mut b = OpDefBuilder::new(name);
    for a in attrs {
        b = b.attr(*a);
    }
    for i in inputs {
        b = b.input(*i);
    }
    for o in outputs {
        b = b.output(*o);
    }
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

/// Inputs only.
fn ins(name: &str, attrs: &[&str], inputs: &[&str]) -> OpDef {
    op(name, attrs, inputs, &[])
}

/// Outputs only.
fn outs(name: &str, attrs: &[&str], outputs: &[&str]) -> OpDef {
    op(name, attrs, &[], outputs)
}

fn attr(name: &str) -> Subject {
    Subject::Attr(name.into())
}

fn input(name: &str) -> Subject {
    Subject::Input(name.into())
}

fn output(name: &str) -> Subject {
    Subject::Output(name.into())
}

/// A pair of versions of an op, the rule it is about, and the violation
/// it must give (`None`: the change is compatible), with any others the
/// same change also gives.
struct Case {
    name: &'static str,
    rule: Rule,
    old: OpDef,
    new: OpDef,
    breaks: Option<Subject>,
    also: Vec<(Rule, Subject)>,
}

impl Case {
    /// The case, where the change also breaks `rule` on `subject`.
    fn and(mut self, rule: Rule, subject: Subject) -> Case {
        self.also.push((rule, subject));
        self
    }
}

fn keeps(name: &'static str, rule: Rule, old: OpDef, new: OpDef) -> Case {
    Case {
        name,
        rule,
        old,
        new,
        breaks: None,
        also: Vec::new(),
    }
}

fn breaks(name: &'static str, rule: Rule, subject: Subject, old: OpDef, new: OpDef) -> Case {
    Case {
        name,
        rule,
        old,
        new,
        breaks: Some(subject),
        also: Vec::new(),
    }
}

fn cases() -> Vec<Case> {
    use Rule::*;
    let deprecated = OpDefBuilder::new("Same")
        .input("a: int32")
        .deprecated(9, "use Other")
        .doc("New docs.\n\na: an input.")
        .set_is_stateful()
        .build()
        .unwrap();
    vec![
        // ---- the op ----
        keeps(
            "deprecation, docs and flags may change",
            OpRemoved,
            ins("Same", &[], &["a: int32"]),
            deprecated,
        ),
        breaks(
            "an op may not be renamed",
            OpRemoved,
            Subject::Op,
            ins("Old", &[], &["a: int32"]),
            ins("New", &[], &["a: int32"]),
        ),
        // ---- attrs ----
        keeps(
            "AttrOrder: attrs may be reordered",
            AttrRemoved,
            outs("AttrOrder", &["b: bool", "a: int"], &["ndef: string"]),
            outs("AttrOrder", &["a: int", "b: bool"], &["ndef: string"]),
        ),
        breaks(
            "RemoveAttrFails",
            AttrRemoved,
            attr("a"),
            op("RemoveAttr", &["a: int"], &[], &[]),
            op("RemoveAttr", &[], &[], &[]),
        ),
        keeps(
            "AddAttr: an attr may be added with a default",
            AttrAddedWithoutDefault,
            outs("AddAttr", &[], &["ndef: string"]),
            outs("AddAttr", &["a: int = 42"], &["ndef: string"]),
        ),
        breaks(
            "AddAttrNoDefaultFails",
            AttrAddedWithoutDefault,
            attr("a"),
            op("AddAttrNoDefault", &[], &[], &[]),
            op("AddAttrNoDefault", &["a: int"], &[], &[]),
        ),
        keeps(
            "an attr keeps its type when its other parts change",
            AttrTypeChanged,
            op("KeepType", &["a: list(int) >= 2"], &[], &[]),
            op("KeepType", &["a: list(int) >= 1 = [1]"], &[], &[]),
        ),
        breaks(
            "ChangeAttrTypeFails",
            AttrTypeChanged,
            attr("a"),
            op("ChangeAttrType", &["a: bool"], &[], &[]),
            op("ChangeAttrType", &["a: int"], &[], &[]),
        ),
        breaks(
            "AttrFromListFails",
            AttrTypeChanged,
            attr("a"),
            op("AttrFromList", &["a: list(int)"], &[], &[]),
            op("AttrFromList", &["a: int"], &[], &[]),
        ),
        breaks(
            "AttrToListFails",
            AttrTypeChanged,
            attr("a"),
            op("AttrToList", &["a: int"], &[], &[]),
            op("AttrToList", &["a: list(int)"], &[], &[]),
        ),
        breaks(
            "PolymorphicToAnyListFails",
            AttrTypeChanged,
            attr("T"),
            ins("PolymorphicToAnyList", &["T: type"], &["a: T"]),
            ins("PolymorphicToAnyList", &["T: list(type)"], &["a: T"]),
        ),
        breaks(
            "SameToAnyListFails",
            AttrTypeChanged,
            attr("T"),
            ins("SameToAnyList", &["T: type", "N: int"], &["a: N * T"]),
            ins("SameToAnyList", &["T: list(type)", "N: int = 1"], &["a: T"]),
        )
        .and(ArgRetyped, input("a")),
        keeps(
            "LessStrict: allowed strings may be added",
            AllowedValuesNarrowed,
            outs("LessStrict", &["a: {'A', 'B'}"], &["ndef: string"]),
            outs("LessStrict", &["a: {'A', 'B', 'C'}"], &["ndef: string"]),
        ),
        keeps(
            "AttrLessRestrictive: allowed types may be added, in any order",
            AllowedValuesNarrowed,
            op("AttrLessRestrictive", &["t: {int32, int64}"], &[], &[]),
            op(
                "AttrLessRestrictive",
                &["t: {bool, int64, int32}"],
                &[],
                &[],
            ),
        ),
        keeps(
            "the guide's wider constraints: {int32, int64} to {int32, int64, float}",
            AllowedValuesNarrowed,
            op("Guide", &["t: {int32, int64}"], &[], &[]),
            op("Guide", &["t: {int32, int64, float}"], &[], &[]),
        ),
        keeps(
            "the guide's wider constraints: {'apple', 'orange'} to {'apple', 'banana', 'orange'}",
            AllowedValuesNarrowed,
            op("Guide", &["s: {'apple', 'orange'}"], &[], &[]),
            op("Guide", &["s: {'apple', 'banana', 'orange'}"], &[], &[]),
        ),
        keeps(
            "the guide's wider constraints: {'apple', 'orange'} to string",
            AllowedValuesNarrowed,
            op("Guide", &["s: {'apple', 'orange'}"], &[], &[]),
            op("Guide", &["s: string"], &[], &[]),
        ),
        keeps(
            "RemoveRestriction: allowed values may be dropped",
            AllowedValuesNarrowed,
            op("RemoveRestriction", &["a: {int32, bool}"], &[], &[]),
            op("RemoveRestriction", &["a: type"], &[], &[]),
        ),
        breaks(
            "AttrAddRestrictionFails",
            AllowedValuesNarrowed,
            attr("t"),
            op("AttrAddRestriction", &["t: type"], &[], &[]),
            op("AttrAddRestriction", &["t: {int32, int64}"], &[], &[]),
        ),
        breaks(
            "AttrMoreRestrictiveFails",
            AllowedValuesNarrowed,
            attr("t"),
            op(
                "AttrMoreRestrictive",
                &["t: {int32, int64, bool}"],
                &[],
                &[],
            ),
            op("AttrMoreRestrictive", &["t: {int32, int64}"], &[], &[]),
        ),
        breaks(
            "an allowed string may not be dropped",
            AllowedValuesNarrowed,
            attr("mode"),
            op("Mode", &["mode: {'fast', 'exact'} = 'exact'"], &[], &[]),
            op("Mode", &["mode: {'exact'} = 'exact'"], &[], &[]),
        ),
        keeps(
            "AttrLowerMin: a minimum may be lowered",
            MinimumRaised,
            op("AttrLowerMin", &["n: int >= 3"], &[], &[]),
            op("AttrLowerMin", &["n: int >= 1"], &[], &[]),
        ),
        keeps(
            "AttrRemoveMin: a minimum may be dropped",
            MinimumRaised,
            op("AttrRemoveMin", &["n: int >= 3"], &[], &[]),
            op("AttrRemoveMin", &["n: int"], &[], &[]),
        ),
        keeps(
            "ShorterSameList: a list length's minimum may be lowered",
            MinimumRaised,
            ins("ShorterSameList", &["N: int >= 2"], &["a: N * int32"]),
            ins("ShorterSameList", &["N: int >= 1"], &["a: N * int32"]),
        ),
        keeps(
            "ShorterAnyList: a type list's minimum may be lowered",
            MinimumRaised,
            ins("ShorterAnyList", &["T: list(type) >= 2"], &["a: T"]),
            ins("ShorterAnyList", &["T: list(type) >= 1"], &["a: T"]),
        ),
        breaks(
            "AttrAddMinFails",
            MinimumRaised,
            attr("n"),
            op("AttrAddMin", &["n: int"], &[], &[]),
            op("AttrAddMin", &["n: int >= 3"], &[], &[]),
        ),
        breaks(
            "AttrRaiseMinFails",
            MinimumRaised,
            attr("n"),
            op("AttrRaiseMin", &["n: int >= 1"], &[], &[]),
            op("AttrRaiseMin", &["n: int >= 3"], &[], &[]),
        ),
        keeps(
            "a default may be added to an attr that had none",
            DefaultRemoved,
            outs("AddDefault", &["a: int"], &["ndef: string"]),
            outs("AddDefault", &["a: int = 1234"], &["ndef: string"]),
        ),
        breaks(
            "RemoveDefault",
            DefaultRemoved,
            attr("a"),
            outs("RemoveDefault", &["a: int = 91"], &["ndef: string"]),
            outs("RemoveDefault", &["a: int"], &["ndef: string"]),
        ),
        keeps(
            "a default written another way is the same default",
            DefaultChanged,
            op(
                "SameDefault",
                &["f: float = 1", "l: list(type) = [DT_INT32]"],
                &[],
                &[],
            ),
            op(
                "SameDefault",
                &["f: float = 1.0", "l: list(type) = [ DT_INT32 ]"],
                &[],
                &[],
            ),
        ),
        breaks(
            "a float default may not change sign, even at zero",
            DefaultChanged,
            attr("f"),
            op("Zero", &["f: float = 0.0"], &[], &[]),
            op("Zero", &["f: float = -0.0"], &[], &[]),
        ),
        keeps(
            "a NaN default is the same NaN default",
            DefaultChanged,
            op("Nan", &["f: float = nan"], &[], &[]),
            op("Nan", &["f: float = nan"], &[], &[]),
        ),
        breaks(
            "ChangeDefault",
            DefaultChanged,
            attr("a"),
            outs("ChangeDefault", &["a: int = 2"], &["ndef: string"]),
            outs("ChangeDefault", &["a: int = 1"], &["ndef: string"]),
        ),
        breaks(
            "a type default may not change",
            DefaultChanged,
            attr("T"),
            ins(
                "ZeroOut",
                &["T: {float, int32} = DT_INT32"],
                &["to_zero: T"],
            ),
            ins(
                "ZeroOut",
                &["T: {float, int32} = DT_FLOAT"],
                &["to_zero: T"],
            ),
        ),
        // ---- inputs and outputs ----
        keeps(
            "AddNInts: a list input that defaults to empty may be added",
            ArgAdded,
            outs("AddNInts", &[], &["ndef: string"]),
            op(
                "AddNInts",
                &["N: int >= 0 = 0"],
                &["a: N * int32"],
                &["ndef: string"],
            ),
        ),
        keeps(
            "AddNSame: a list of a new type attr that defaults to empty may be added",
            ArgAdded,
            outs("AddNSame", &[], &["ndef: string"]),
            op(
                "AddNSame",
                &["N: int >= 0 = 0", "T: type = DT_BOOL"],
                &["a: N * T"],
                &["ndef: string"],
            ),
        ),
        keeps(
            "AddNSameAsExisting: a list of an existing type attr that defaults to empty may be added",
            ArgAdded,
            ins("AddNSameAsExisting", &["T: type"], &["a: T"]),
            ins(
                "AddNSameAsExisting",
                &["N: int >= 0 = 0", "T: type"],
                &["a: T", "b: N * T"],
            ),
        ),
        keeps(
            "AddAnyList: a type list that defaults to empty may be added",
            ArgAdded,
            outs("AddAnyList", &[], &["ndef: string"]),
            op(
                "AddAnyList",
                &["T: list(type) >= 0 = []"],
                &["a: T"],
                &["ndef: string"],
            ),
        ),
        keeps(
            "an output list that defaults to empty may be added",
            ArgAdded,
            outs("AddOutputs", &[], &["y: float"]),
            outs(
                "AddOutputs",
                &["N: int >= 0 = 0"],
                &["y: float", "extra: N * int32"],
            ),
        ),
        breaks(
            "AddSingleInputFails",
            ArgAdded,
            input("a"),
            op("AddSingleInput", &[], &[], &[]),
            ins("AddSingleInput", &[], &["a: int32"]),
        ),
        breaks(
            "AddNIntsBigDefaultFails",
            ArgAdded,
            input("a"),
            op("AddNIntsBigDefault", &[], &[], &[]),
            ins("AddNIntsBigDefault", &["N: int = 1"], &["a: N * int32"]),
        ),
        breaks(
            "AddNSameBigDefaultFails",
            ArgAdded,
            input("a"),
            op("AddNSameBigDefault", &[], &[], &[]),
            ins(
                "AddNSameBigDefault",
                &["N: int = 1", "T: type = DT_INT32"],
                &["a: N * T"],
            ),
        ),
        breaks(
            "AddListBigDefaultFails",
            ArgAdded,
            input("a"),
            op("AddListBigDefault", &[], &[], &[]),
            ins(
                "AddListBigDefault",
                &["T: list(type) = [DT_INT32]"],
                &["a: T"],
            ),
        ),
        breaks(
            "a single input may not become a list whose default is longer",
            ArgAdded,
            input("a"),
            ins("MakeList", &[], &["a: int32"]),
            ins("MakeList", &["N: int = 2"], &["a: N * int32"]),
        ),
        breaks(
            "an output may not be added in the middle",
            ArgAdded,
            output("mid"),
            outs("Outs", &[], &["a: int32", "b: float"]),
            outs("Outs", &[], &["a: int32", "mid: bool", "b: float"]),
        ),
        keeps(
            "MakeList: a single input may become a list whose default is one",
            ArgRemoved,
            ins("MakeList", &[], &["a: int32"]),
            ins("MakeList", &["N: int = 1"], &["a: N * int32"]),
        ),
        keeps(
            "MakePolyList: a single input may become a polymorphic list",
            ArgRemoved,
            ins("MakePolyList", &[], &["a: int32"]),
            ins(
                "MakePolyList",
                &["N: int = 1", "T: type = DT_INT32"],
                &["a: N * T"],
            ),
        ),
        keeps(
            "MakeAnyList: a single input may become a type list",
            ArgRemoved,
            ins("MakeAnyList", &[], &["a: int32"]),
            ins("MakeAnyList", &["T: list(type) = [DT_INT32]"], &["a: T"]),
        ),
        keeps(
            "PolyIntoList: a polymorphic input may become a list of its type",
            ArgRemoved,
            ins("PolyIntoList", &["T: type"], &["a: T"]),
            ins("PolyIntoList", &["N: int = 1", "T: type"], &["a: N * T"]),
        ),
        keeps(
            "MakeMultipleSameList: two inputs may become one list of two",
            ArgRemoved,
            ins("MakeMultipleSameList", &[], &["a: int32", "b: int32"]),
            ins("MakeMultipleSameList", &["N: int = 2"], &["a: N * int32"]),
        ),
        keeps(
            "MakeMultipleAnyList: two inputs may become one type list of their types",
            ArgRemoved,
            ins("MakeMultipleAnyList", &[], &["a: int32", "b: float"]),
            ins(
                "MakeMultipleAnyList",
                &["T: list(type) = [DT_INT32, DT_FLOAT]"],
                &["a: T"],
            ),
        ),
        breaks(
            "RemoveInputFails",
            ArgRemoved,
            input("a"),
            ins("RemoveInput", &[], &["a: float"]),
            op("RemoveInput", &[], &[], &[]),
        ),
        breaks(
            "an output may not be removed",
            ArgRemoved,
            output("b"),
            outs("RemoveOutput", &[], &["a: int32", "b: float"]),
            outs("RemoveOutput", &[], &["a: int32"]),
        ),
        breaks(
            "two inputs may not become a list whose default is one",
            ArgRemoved,
            input("b"),
            ins("Shrink", &[], &["a: int32", "b: int32"]),
            ins("Shrink", &["N: int = 1"], &["a: N * int32"]),
        ),
        keeps(
            "ChangeName: an input may be renamed",
            ArgsReordered,
            ins("ChangeName", &[], &["x: int32"]),
            ins("ChangeName", &[], &["y: int32"]),
        ),
        keeps(
            "an input may be renamed next to one that keeps its name",
            ArgsReordered,
            ins("Rename", &[], &["x: float", "y: float"]),
            ins("Rename", &[], &["x: float", "z: float"]),
        ),
        breaks(
            "ChangeOrderFails",
            ArgsReordered,
            input("b"),
            ins("ChangeOrder", &[], &["b: int32", "a: float"]),
            ins("ChangeOrder", &[], &["a: float", "b: int32"]),
        ),
        breaks(
            "inputs of the same type may not swap (TensorFlow's check misses this)",
            ArgsReordered,
            input("x"),
            ins("Sub", &["T: type"], &["x: T", "y: T"]),
            ins("Sub", &["T: type"], &["y: T", "x: T"]),
        ),
        breaks(
            "outputs may not be reordered",
            ArgsReordered,
            output("a"),
            outs("Outs", &[], &["a: int32", "b: float"]),
            outs("Outs", &[], &["b: float", "a: int32"]),
        ),
        keeps(
            "the guide's MyGeneralUnaryOp made polymorphic, float by default",
            ArgRetyped,
            op("MyGeneralUnaryOp", &[], &["in: float"], &["out: float"]),
            op(
                "MyGeneralUnaryOp",
                &["T: numerictype = DT_FLOAT"],
                &["in: T"],
                &["out: T"],
            ),
        ),
        keeps(
            "TypePolymorphic: an input may become polymorphic with the old type as default",
            ArgRetyped,
            ins("TypePolymorphic", &[], &["a: int32"]),
            ins("TypePolymorphic", &["T: type = DT_INT32"], &["a: T"]),
        ),
        keeps(
            "an output may become polymorphic with the old type as default",
            ArgRetyped,
            outs("PolyOut", &[], &["ndef: string"]),
            outs("PolyOut", &["T: type = DT_STRING"], &["ndef: T"]),
        ),
        breaks(
            "ChangeTypeFails",
            ArgRetyped,
            input("a"),
            ins("ChangeType", &[], &["a: int32"]),
            ins("ChangeType", &[], &["a: float"]),
        ),
        breaks(
            "an input may not become polymorphic with another type as default",
            ArgRetyped,
            input("a"),
            ins("TypePolymorphic", &[], &["a: int32"]),
            ins("TypePolymorphic", &["T: type = DT_FLOAT"], &["a: T"]),
        ),
        breaks(
            "an input may not switch to another type attr",
            ArgRetyped,
            input("a"),
            ins("SwitchAttr", &["T: type", "U: type"], &["a: T"]),
            ins("SwitchAttr", &["T: type", "U: type"], &["a: U"]),
        ),
        keeps(
            "an output keeps its name when it becomes polymorphic",
            OutputRenamed,
            outs("Poly", &[], &["y: float"]),
            outs("Poly", &["T: type = DT_FLOAT"], &["y: T"]),
        ),
        breaks(
            "RenameOutputFails",
            OutputRenamed,
            output("old"),
            outs("RenameOutput", &[], &["old: int32"]),
            outs("RenameOutput", &[], &["new: int32"]),
        ),
        breaks(
            "RenameNOutputsFails",
            OutputRenamed,
            output("old"),
            outs("RenameNOutputs", &["N: int"], &["old: N * int32"]),
            outs("RenameNOutputs", &["N: int"], &["new: N * int32"]),
        ),
        breaks(
            "RenameOutputListFails",
            OutputRenamed,
            output("old"),
            outs("RenameOutputList", &["T: list(type)"], &["old: T"]),
            outs("RenameOutputList", &["T: list(type)"], &["new: T"]),
        ),
        keeps(
            "InputRemoveRef: an input may stop being a reference",
            InputBecameRef,
            ins("InputRemoveRef", &[], &["i: Ref(int32)"]),
            ins("InputRemoveRef", &[], &["i: int32"]),
        ),
        breaks(
            "InputAddRefFails",
            InputBecameRef,
            input("i"),
            ins("InputAddRef", &[], &["i: int32"]),
            ins("InputAddRef", &[], &["i: Ref(int32)"]),
        ),
        keeps(
            "OutputAddRef: an output may become a reference",
            OutputLostRef,
            outs("OutputAddRef", &[], &["o: int32", "ndef: string"]),
            outs("OutputAddRef", &[], &["o: Ref(int32)", "ndef: string"]),
        ),
        breaks(
            "OutputRemoveRefFails",
            OutputLostRef,
            output("o"),
            outs("OutputRemoveRef", &[], &["o: Ref(int32)"]),
            outs("OutputRemoveRef", &[], &["o: int32"]),
        ),
    ]
}

#[test]
fn every_case_gives_exactly_the_violation_it_names() {
    let mut failures = Vec::new();
    for case in cases() {
        let got = compat::check(&case.old, &case.new);
        let got_short: Vec<(Rule, Subject)> =
            got.iter().map(|v| (v.rule, v.subject.clone())).collect();
        let mut want: Vec<(Rule, Subject)> =
            case.breaks.iter().map(|s| (case.rule, s.clone())).collect();
        want.extend(case.also.iter().cloned());
        if got_short != want {
            let shown: Vec<String> = got.iter().map(Violation::to_string).collect();
            failures.push(format!(
                "{}: want {want:?}, got:\n{}",
                case.name,
                shown.join("\n")
            ));
        }
        // Every op is compatible with itself.
        for op in [&case.old, &case.new] {
            let same = compat::check(op, op);
            if !same.is_empty() {
                failures.push(format!(
                    "{}: {} against itself: {same:?}",
                    case.name, op.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_rule_has_a_compatible_and_an_incompatible_case() {
    let cases = cases();
    for rule in Rule::ALL {
        let of_rule = || cases.iter().filter(move |c| c.rule == rule);
        assert!(
            of_rule().any(|c| c.breaks.is_none()),
            "no compatible case for {rule}"
        );
        assert!(
            of_rule().any(|c| c.breaks.is_some()),
            "no incompatible case for {rule}"
        );
    }
}

#[test]
fn a_violation_names_the_op_the_part_the_rule_and_both_versions() {
    let shown = |old: &OpDef, new: &OpDef| -> Vec<String> {
        compat::check(old, new)
            .iter()
            .map(Violation::to_string)
            .collect()
    };
    assert_eq!(
        shown(
            &op("RemoveAttr", &["a: int >= 0 = 3"], &[], &[]),
            &op("RemoveAttr", &[], &[], &[])
        ),
        [
            "RemoveAttr: attr 'a' was removed: an attr may not be removed: graphs that set it no longer load\n  \
          old: a: int >= 0 = 3\n  \
          new: (none)"
        ]
    );
    assert_eq!(
        shown(
            &ins("ChangeOrder", &[], &["b: int32", "a: float"]),
            &ins("ChangeOrder", &[], &["a: float", "b: int32"])
        ),
        [
            "ChangeOrder: input 'b' moved: inputs and outputs may not be reordered: graphs connect them by position\n  \
          old: b: int32, a: float\n  \
          new: a: float, b: int32"
        ]
    );
    // A list is shown as the tensors old graphs get, by the new default.
    assert_eq!(
        shown(
            &ins("MakeList", &[], &["a: int32"]),
            &ins("MakeList", &["N: int = 2"], &["a: N * int32"])
        ),
        [
            "MakeList: input 'a' was added: inputs and outputs may not be added, except as a list that \
          defaults to empty or a single one turned into a list whose default matches it\n  \
          old: a: int32\n  \
          new: a: int32, a: int32"
        ]
    );
    assert_eq!(
        shown(
            &outs("OutputRemoveRef", &["N: int"], &["o: Ref(N * int32)"]),
            &outs("OutputRemoveRef", &["N: int"], &["o: N * int32"])
        ),
        [
            "OutputRemoveRef: output 'o' is no longer a reference: an output may not stop being a reference (it may become one)\n  \
          old: o: Ref(N * int32)\n  \
          new: o: N * int32"
        ]
    );
    let renamed = compat::check(
        &ins("Old", &[], &["a: int32"]),
        &op("New", &["T: type"], &["a: T"], &["b: T"]),
    );
    assert_eq!(
        renamed[0].to_string(),
        "Old: op was removed or renamed: an op may not be removed or renamed: graphs that use it no \
         longer load (deprecate it, and add the new name as a new op)\n  \
         old: Old(a: int32) -> ()\n  \
         new: New(a: T) -> (b: T); T: type"
    );
}

#[test]
fn several_changes_to_one_op_give_one_violation_each() {
    let old = op(
        "Many",
        &["T: {float, int32}", "n: int >= 1 = 1", "gone: bool"],
        &["x: T", "r: int32"],
        &["y: T"],
    );
    let new = op(
        "Many",
        &["T: {float}", "n: int >= 2 = 2", "fresh: string"],
        &["x: T", "r: Ref(int32)"],
        &["z: T"],
    );
    let got: Vec<(Rule, Subject)> = compat::check(&old, &new)
        .into_iter()
        .map(|v| (v.rule, v.subject))
        .collect();
    assert_eq!(
        got,
        [
            (Rule::AllowedValuesNarrowed, attr("T")),
            (Rule::MinimumRaised, attr("n")),
            (Rule::DefaultChanged, attr("n")),
            (Rule::AttrRemoved, attr("gone")),
            (Rule::AttrAddedWithoutDefault, attr("fresh")),
            (Rule::InputBecameRef, input("r")),
            (Rule::OutputRenamed, output("y")),
        ]
    );
}

#[test]
fn op_lists_compare_by_name_and_ops_may_be_added() {
    let a = ins("A", &[], &["x: int32"]);
    let b = ins("B", &["T: {float}"], &["x: T"]);
    let b_narrower = ins("B", &["T: {float, double}"], &["x: T"]);
    let c = ins("C", &[], &["x: int32"]);
    // Order does not matter; an added op is compatible.
    assert!(
        compat::check_op_lists(&[a.clone(), b.clone()], &[c.clone(), b.clone(), a.clone()])
            .is_empty()
    );
    assert!(compat::check_op_lists(&[], std::slice::from_ref(&a)).is_empty());
    let got = compat::check_op_lists(&[a.clone(), b_narrower, c.clone()], &[b, a]);
    let short: Vec<(&str, Rule, &Subject)> = got
        .iter()
        .map(|v| (v.op.as_str(), v.rule, &v.subject))
        .collect();
    assert_eq!(
        short,
        [
            ("B", Rule::AllowedValuesNarrowed, &attr("T")),
            ("C", Rule::OpRemoved, &Subject::Op),
        ]
    );
    assert_eq!(got[1].old, "C(x: int32) -> ()");
    assert_eq!(got[1].new, "(none)");
}

#[test]
fn a_huge_list_default_is_compared_without_expanding_it() {
    let old = ins("Huge", &[], &["a: int32"]);
    let new = ins("Huge", &["N: int = 1000000000"], &["a: N * int32"]);
    let got = compat::check(&old, &new);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].rule, Rule::ArgRetyped);
    assert_eq!(got[0].new, "a: 1000000000 * int32");
}

#[test]
fn rule_ids_are_distinct() {
    let mut ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), Rule::ALL.len());
    assert_eq!(Rule::DefaultChanged.to_string(), "default-changed");
}

/// TensorFlow's `OpDefCompatible` does not compare `experimental_full_type`
/// (its `op_compatibility_lib` records such a change as a new, compatible
/// version of the op): a full type may be added, changed or dropped.
#[test]
fn a_full_type_may_change() {
    let shape = |full_type: Option<&str>| {
        let mut b = OpDefBuilder::new("Shape")
            .attr("T: type")
            .attr("out_type: {int32, int64} = DT_INT32")
            .input("input: T")
            .output("output: out_type");
        if let Some(spec) = full_type {
            b = b.full_type(spec);
        }
        b.build().unwrap_or_else(|e| panic!("{e}"))
    };
    let none = shape(None);
    let shape_tensor = shape(Some("output: TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]"));
    let tensor = shape(Some("output: TFT_TENSOR[TFT_VAR{'out_type'}]"));
    assert_ne!(none, shape_tensor);
    for (old, new) in [
        (&none, &shape_tensor),
        (&shape_tensor, &tensor),
        (&shape_tensor, &none),
    ] {
        assert_eq!(compat::check(old, new), [], "{old:?} -> {new:?}");
    }
    // With another change, only that one is reported.
    let mut retyped = shape_tensor.clone();
    retyped.outputs[0].ty = op_spec::ArgType::Fixed(op_spec::DType::I64);
    let got: Vec<Rule> = compat::check(&none, &retyped)
        .into_iter()
        .map(|v| v.rule)
        .collect();
    assert_eq!(got, [Rule::ArgRetyped]);
}
