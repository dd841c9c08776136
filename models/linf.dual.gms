$offlisting
$offdigit

EQUATIONS
	stat_upper_6__hi
	stat_upper_11__hi
	stat_upper_14__hi
	stat_upper_18__hi
	stat_upper_20__hi
	stat_upper_23__hi
	stat_upper_26__hi
	stat_upper_28__hi
	stat_upper_31__hi
	stat_upper_36__hi
	stat_upper_38__hi
	stat_upper_4__hi
	stat_upper_12__hi
	stat_upper_13__hi
	stat_upper_32__hi
	stat_upper_33__hi
	stat_lower_6__lo
	stat_lower_11__lo
	stat_lower_14__lo
	stat_lower_18__lo
	stat_lower_20__lo
	stat_lower_23__lo
	stat_lower_26__lo
	stat_lower_28__lo
	stat_lower_31__lo
	stat_lower_36__lo
	stat_lower_38__lo
	stat_lower_4__lo
	stat_lower_12__lo
	stat_lower_13__lo
	stat_lower_32__lo
	stat_lower_33__lo
	budget_hi
	objective;

POSITIVE VARIABLES
	alpha_4_
	s_6_
	s_11_
	s_14_
	alpha_11_
	alpha_7_
	s_18_
	s_20_
	alpha_6_
	alpha_0_
	s_23_
	s_26_
	s_28_
	s_31_
	s_36_
	s_38_
	alpha_1_
	s_4_
	s_12_
	s_13_
	s_32_
	s_33_;

VARIABLES
	GAMS_OBJECTIVE
	;


stat_upper_6__hi.. 0.40250535449109437*alpha_4_ - s_6_ =l= 0 ;
stat_upper_11__hi.. 0.23525152020535517*alpha_4_ - s_11_ =l= 0 ;
stat_upper_14__hi.. 0.40250535449109437*alpha_4_ - s_14_ =l= 0 ;
stat_upper_18__hi.. 0.1949457516132066*alpha_11_ + 0.27866174005832978*alpha_7_ - s_18_ =l= 0 ;
stat_upper_20__hi.. 0.42859915142034577*alpha_11_ + 0.4640966558393754*alpha_7_ - s_20_ =l= 0 ;
stat_upper_23__hi.. 0.14681917095796865*alpha_6_ + 0.30444183418004178*alpha_0_ - s_23_ =l= 0 ;
stat_upper_26__hi.. 0.1949457516132066*alpha_11_ + 0.27866174005832978*alpha_7_ - s_26_ =l= 0 ;
stat_upper_28__hi.. 0.42859915142034577*alpha_11_ + 0.4640966558393754*alpha_7_ - s_28_ =l= 0 ;
stat_upper_31__hi.. 0.14681917095796865*alpha_6_ + 0.30444183418004178*alpha_0_ - s_31_ =l= 0 ;
stat_upper_36__hi.. 0.23525152020535517*alpha_4_ - s_36_ =l= 0 ;
stat_upper_38__hi.. 0.6151559761887454*alpha_6_ - s_38_ =l= 0 ;
stat_upper_4__hi.. 0.17561380922414635*alpha_1_ - s_4_ =l= 0 ;
stat_upper_12__hi.. 0.17561380922414635*alpha_1_ - s_12_ =l= 0 ;
stat_upper_13__hi.. 0.849379732888058*alpha_1_ - s_13_ =l= 0 ;
stat_upper_32__hi.. 1.3217368604348763*alpha_0_ - s_32_ =l= 0 ;
stat_upper_33__hi.. 0.849379732888058*alpha_1_ - s_33_ =l= 0 ;
stat_lower_6__lo.. 0 =l= 0.40250535449109437*alpha_4_ + s_6_ ;
stat_lower_11__lo.. 0 =l= 0.23525152020535517*alpha_4_ + s_11_ ;
stat_lower_14__lo.. 0 =l= 0.40250535449109437*alpha_4_ + s_14_ ;
stat_lower_18__lo.. 0 =l= 0.1949457516132066*alpha_11_ + 0.27866174005832978*alpha_7_ + s_18_ ;
stat_lower_20__lo.. 0 =l= 0.42859915142034577*alpha_11_ + 0.4640966558393754*alpha_7_ + s_20_ ;
stat_lower_23__lo.. 0 =l= 0.14681917095796865*alpha_6_ + 0.30444183418004178*alpha_0_ + s_23_ ;
stat_lower_26__lo.. 0 =l= 0.1949457516132066*alpha_11_ + 0.27866174005832978*alpha_7_ + s_26_ ;
stat_lower_28__lo.. 0 =l= 0.42859915142034577*alpha_11_ + 0.4640966558393754*alpha_7_ + s_28_ ;
stat_lower_31__lo.. 0 =l= 0.14681917095796865*alpha_6_ + 0.30444183418004178*alpha_0_ + s_31_ ;
stat_lower_36__lo.. 0 =l= 0.23525152020535517*alpha_4_ + s_36_ ;
stat_lower_38__lo.. 0 =l= 0.6151559761887454*alpha_6_ + s_38_ ;
stat_lower_4__lo.. 0 =l= 0.17561380922414635*alpha_1_ + s_4_ ;
stat_lower_12__lo.. 0 =l= 0.17561380922414635*alpha_1_ + s_12_ ;
stat_lower_13__lo.. 0 =l= 0.849379732888058*alpha_1_ + s_13_ ;
stat_lower_32__lo.. 0 =l= 1.3217368604348763*alpha_0_ + s_32_ ;
stat_lower_33__lo.. 0 =l= 0.849379732888058*alpha_1_ + s_33_ ;
budget_hi.. s_6_ + s_11_ + s_14_ + s_18_ + s_20_ + s_23_ + s_26_ + s_28_ + s_31_ + s_36_ + s_38_ + s_4_ + s_12_ + s_13_ + s_32_ + s_33_ =l= 1 ;
objective.. GAMS_OBJECTIVE =e= alpha_6_ + alpha_11_ + alpha_4_ + alpha_7_ + alpha_1_ + alpha_0_ ;


MODEL GAMS_MODEL /all/ ;
option solprint=off;
option limrow=0;
option limcol=0;
option solvelink=5;
SOLVE GAMS_MODEL USING lp maximizing GAMS_OBJECTIVE;

Scalars MODELSTAT 'model status', SOLVESTAT 'solve status';
MODELSTAT = GAMS_MODEL.modelstat;
SOLVESTAT = GAMS_MODEL.solvestat;

Scalar OBJEST 'best objective', OBJVAL 'objective value';
OBJEST = GAMS_MODEL.objest;
OBJVAL = GAMS_MODEL.objval;

Scalar NUMVAR 'number of variables';
NUMVAR = GAMS_MODEL.numvar

Scalar NUMEQU 'number of equations';
NUMEQU = GAMS_MODEL.numequ

Scalar NUMDVAR 'number of discrete variables';
NUMDVAR = GAMS_MODEL.numdvar

Scalar NUMNZ 'number of nonzeros';
NUMNZ = GAMS_MODEL.numnz

Scalar ETSOLVE 'time to execute solve statement';
ETSOLVE = GAMS_MODEL.etsolve

